#include "report.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

int write_json_report(const char *path, const model_config *cfg, int prompt_tokens, const run_record *runs, int nruns,
                      int identical) {
    cJSON *root = cJSON_CreateObject();
    cJSON *config = cJSON_AddObjectToObject(root, "config");
    cJSON_AddNumberToObject(config, "d_model", cfg->d_model);
    cJSON_AddNumberToObject(config, "layers", cfg->layers);
    cJSON_AddNumberToObject(config, "heads", cfg->heads);
    cJSON_AddNumberToObject(config, "vocab", cfg->vocab);
    cJSON_AddNumberToObject(config, "tokens", cfg->tokens);
    cJSON_AddNumberToObject(config, "seed", cfg->seed);
    cJSON_AddBoolToObject(root, "identical_tokens_and_logits", identical);
    if (prompt_tokens > 0 && nruns > 0 && runs[nruns - 1].count > 0) { /* the last run's (scoped) */
        cJSON *prompt = cJSON_AddObjectToObject(root, "prompt");
        const double ms = runs[nruns - 1].steps[0].ms;
        cJSON_AddNumberToObject(prompt, "tokens", prompt_tokens);
        cJSON_AddNumberToObject(prompt, "ms", ms);
        cJSON_AddNumberToObject(prompt, "tokens_per_second", prompt_tokens / (ms / 1e3));
    }
    cJSON *modes = cJSON_AddObjectToObject(root, "modes");
    for (int r = 0; r < nruns; ++r) {
        cJSON *steps = cJSON_AddArrayToObject(modes, runs[r].mode);
        for (int i = 0; i < runs[r].count; ++i) {
            const step_record *s = &runs[r].steps[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "step", i);
            cJSON_AddNumberToObject(o, "token", s->token);
            cJSON_AddNumberToObject(o, "ms", s->ms);
            cJSON_AddNumberToObject(o, "malloc_calls", (double)s->mallocs);
            cJSON_AddNumberToObject(o, "bytes_in_use", (double)s->bytes_in_use);
            cJSON_AddNumberToObject(o, "slab_bytes", (double)s->slab_bytes);
            cJSON_AddNumberToObject(o, "peak_bytes", (double)s->peak_bytes);
            cJSON_AddNumberToObject(o, "grow_events", (double)s->grow_events);
            cJSON_AddItemToArray(steps, o);
        }
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    FILE *f = text ? fopen(path, "w") : NULL;
    int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    if (f && fclose(f) != 0) ok = 0;
    free(text);
    if (!ok) {
        fprintf(stderr, "decode: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

typedef double (*step_value)(const step_record *r);
static double bytes_kib(const step_record *r) { return (double)r->bytes_in_use / 1024.0; }
static double mallocs(const step_record *r) { return (double)r->mallocs; }

/* One panel at vertical offset y0: a polyline per mode, axes, gridlines, a title. */
static void panel(FILE *f, double y0, const char *title, step_value value, const run_record *runs, int nruns) {
    const double W = 720, H = 300, left = 80, right = 20, top = 40, bottom = 50;
    const char *colors[] = {"#d9480f", "#1971c2"};
    double ymax = 1;
    int xmax = 1;
    for (int r = 0; r < nruns; ++r)
        for (int i = 0; i < runs[r].count; ++i) {
            if (value(&runs[r].steps[i]) > ymax) ymax = value(&runs[r].steps[i]);
            if (i > xmax) xmax = i;
        }
    fprintf(f, "<g transform='translate(0,%.0f)'>\n", y0);
    fprintf(f, "<text x='%.0f' y='22' font-size='15'>%s</text>\n", left, title);
    fprintf(f, "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' stroke='black'/>\n", left, H - bottom, W - right,
            H - bottom);
    fprintf(f, "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' stroke='black'/>\n", left, top, left, H - bottom);
    for (int t = 0; t <= 4; ++t) {
        double y = H - bottom - (H - top - bottom) * t / 4.0;
        fprintf(f, "<text x='%.0f' y='%.1f' text-anchor='end'>%.0f</text>\n", left - 6, y + 4, ymax * t / 4.0);
        fprintf(f, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' stroke='#ddd'/>\n", left, y, W - right, y);
        double x = left + (W - left - right) * t / 4.0;
        fprintf(f, "<text x='%.1f' y='%.0f' text-anchor='middle'>%d</text>\n", x, H - bottom + 18, xmax * t / 4);
    }
    fprintf(f, "<text x='%.0f' y='%.0f' text-anchor='middle'>step</text>\n", (W + left) / 2, H - 10);
    for (int r = 0; r < nruns && r < 2; ++r) {
        fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='%d' points='", colors[r], r == 0 ? 4 : 2);
        for (int i = 0; i < runs[r].count; ++i) {
            double x = left + (W - left - right) * i / xmax;
            double y = H - bottom - (H - top - bottom) * value(&runs[r].steps[i]) / ymax;
            fprintf(f, "%.1f,%.1f ", x, y);
        }
        fprintf(f, "'/>\n");
        /* the legend sits beside the title, above the plot, where no line can run */
        fprintf(f, "<rect x='%.0f' y='14' width='14' height='4' fill='%s'/><text x='%.0f' y='20'>%s</text>\n",
                W - 220 + 100.0 * r, colors[r], W - 200 + 100.0 * r, runs[r].mode);
    }
    fprintf(f, "</g>\n");
}

/* Two panels, one above the other: memory in use per step, and allocator calls per step. */
int write_svg_chart(const char *path, const run_record *runs, int nruns) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "decode: cannot write %s\n", path);
        return -1;
    }
    fprintf(
        f,
        "<svg xmlns='http://www.w3.org/2000/svg' width='720' height='600' font-family='sans-serif' font-size='12'>\n");
    fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n");
    panel(f, 0, "Memory in use per decode step (KiB)", bytes_kib, runs, nruns);
    panel(f, 300, "Allocator calls per decode step", mallocs, runs, nruns);
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}
