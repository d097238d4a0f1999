/* cmd_import.c: `fuseeng import MODEL.onnx -o MODEL.json`: an ONNX model as
 * a fuseeng.model/1 file and its weights as safetensors. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng import MODEL.onnx -o MODEL.json [--weights-out FILE] [--dim NAME=V]...\n"
    "\n"
    "Import an ONNX model: its operators mapped to fuseeng's (docs/import.md lists\n"
    "them), constant subgraphs (shape arithmetic) folded away, every shape checked\n"
    "by fuseeng's own inference. Writes MODEL.json and the initializers as\n"
    "MODEL.safetensors beside it (the weights for run --execute --weights), both\n"
    "or neither, also when interrupted. Graph inputs, outputs and initializers\n"
    "keep their ONNX names.\n"
    "\n"
    "  -o FILE            the model file to write (required)\n"
    "  --weights-out FILE where the weights go (default: FILE's .json -> .safetensors)\n"
    "  --dim NAME=V       default of a symbolic (dim_param) dim; others default to 1\n"
    "\n"
    "An operator without a mapping becomes a `custom` node and a warning on stderr\n"
    "naming it. Notes and warnings go to stderr, a one-line summary too. Exit\n"
    "status 2 and one message naming the file and node (or tensor) when the model\n"
    "cannot be imported: not ONNX or truncated, an opset, operator domain or dtype\n"
    "not supported, control flow (If/Loop/Scan), external data, names, inputs,\n"
    "attributes or dims out of what ONNX allows, shapes that do not check.\n";

static int run(int argc, char **argv)
{
    const char *model = NULL, *out = NULL, *wout = NULL, *val;
    fe_cli_dims dims = {0};
    for (int i = 1; i < argc; i++) {
        int m;
        if ((m = fe_cli_opt("import", argc, argv, &i, "-o", &val)) == 1) {
            out = val;
        } else if (m == 0 && (m = fe_cli_opt("import", argc, argv, &i, "--weights-out", &val)) == 1) {
            wout = val;
        } else if (m == 0 && (m = fe_cli_opt("import", argc, argv, &i, "--dim", &val)) == 1) {
            if (fe_cli_add_dim("import", &dims, val))
                return 2;
        } else if (m == 2) {
            return 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("import", "unknown option '%s'", argv[i]);
        } else if (model) {
            return fe_cli_usage("import", "one MODEL at a time (got '%s' and '%s')", model, argv[i]);
        } else {
            model = argv[i];
        }
    }
    if (!model)
        return fe_cli_usage("import", "missing MODEL (an .onnx file)");
    if (!out)
        return fe_cli_usage("import", "missing -o MODEL.json (the model file to write)");
    char wdefault[4096];
    if (!wout) {
        size_t len = strlen(out);
        if (len > 5 && strcmp(out + len - 5, ".json") == 0)
            len -= 5;
        snprintf(wdefault, sizeof wdefault, "%.*s.safetensors", (int)len, out);
        wout = wdefault;
    }
    fe_cli_file in[] = {{"the model", model}}, outs[] = {{"-o", out}, {"--weights-out", wout}};
    if (fe_cli_distinct("import", in, 1, outs, 2))
        return 2;
    fe_import_options o = {wout, dims.n, dims.names, dims.values};
    fe_error err = {0};
    char *notes = NULL;
    int rc = fe_import_onnx(model, out, &o, &notes, &err);
    if (notes)
        fe_cli_printf(stderr, "%s", notes);
    fe_free(notes);
    return rc ? fe_cli_fail(&err) : 0;
}

const fe_cmd fe_cmd_import = {"import", "import an ONNX model as a model file and its weights",
                              usage, run};
