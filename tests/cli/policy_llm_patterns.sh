# policy_llm_patterns.sh: policies/llm_patterns.lua, seed 000's LLM patterns
# (SwiGLU, Add+RMSNorm, GELU) found by the sliding-window patterns driver.
# Every fused group of every model is checked, counted by hand from the
# graphs: the exports in ../shared/models decompose RMSNorm (cast, pow,
# mean, add eps, rsqrt, mul, cast, mul weight) and GPT-2's tanh GELU; a
# hand-written graph holds the other forms PyTorch code produces, with
# commuted operands, and look-alikes that must not match.
. tests/lib.sh

# groups MODEL: the plan's fused groups, one per line, nodes space-separated.
groups() {
    "$FUSEENG" run "$1" --policy llm_patterns --json |
        sed -n 's/^  {"id": [0-9]*, "nodes": \[\("[^]]*", "[^]]*\)\].*/\1/p' | tr -d '",'
}
# expect_groups NAME MODEL 'group' ...: exactly these groups, in plan order.
expect_groups() {
    name=$1 model=$2; shift 2
    want=$(printf '%s\n' "$@")
    [ $# -eq 0 ] && want=""
    got=$(groups "$model")
    if [ "$got" = "$want" ]; then ok "$name"; else not_ok "$name" "got:" "$got" "want:" "$want"; fi
}

L=$SHARED/models/llama2-7b-2l-sdpa.json
if [ -f "$L" ]; then
    # 2 layers: 2 SwiGLUs and 2 x 2 + 1 RMSNorms; the first norm's input is
    # the embedding (a gather), the other four follow a residual add.
    expect_groups "LLaMA-2 export: 5 RMSNorms (4 with their residual add), 2 SwiGLUs" "$L" \
        "to_6 pow_1 mean add_3 rsqrt mul_2 to_7 mul_3" \
        "add_6 to_8 pow_2 mean_1 add_7 rsqrt_1 mul_8 to_9 mul_9" \
        "silu mul_10" \
        "add_8 to_10 pow_3 mean_2 add_9 rsqrt_2 mul_11 to_11 mul_12" \
        "add_12 to_12 pow_4 mean_3 add_13 rsqrt_3 mul_17 to_13 mul_18" \
        "silu_1 mul_19" \
        "add_14 to_14 pow_5 mean_4 add_15 rsqrt_4 mul_20 to_15 mul_21"
    expect_ok "reasons name the pattern" \
        '^  fuse +\[add_6, .*\] +Add\+RMSNorm: add\+cast\+pow\+mean\+add\+rsqrt\+mul\+cast\+mul$' \
        "$FUSEENG" run "$L" --policy llm_patterns --explain
else
    skip "LLaMA-2 export" "no $L"
fi
G=$SHARED/models/gpt2-small-2l-eager.json
if [ -f "$G" ]; then
    # GPT-2's gelu_new, 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), once per layer;
    # its norms are LayerNorms, which are not seed patterns.
    expect_groups "GPT-2 export: the two decomposed tanh GELUs" "$G" \
        "mul_1 pow_1 mul_2 add_6 mul_3 tanh add_7 mul_4" \
        "mul_6 pow_2 mul_7 add_11 mul_8 tanh_1 add_12 mul_9"
    expect_ok "GELU reason" '^  fuse +\[mul_1, .*\] +GELU: mul\+pow\+mul\+add\+mul\+tanh\+add\+mul$' \
        "$FUSEENG" run "$G" --policy llm_patterns --explain
else
    skip "GPT-2 export" "no $G"
fi
for m in "$SHARED"/models/*.json; do
    case $m in */llama2-7b-2l-sdpa.json|*/gpt2-small-2l-eager.json) continue ;; esac
    [ -f "$m" ] && expect_groups "$(basename "$m"): no LLM pattern" "$m"
done
expect_groups "LLaMA-2 layer: Add+RMSNorm and SwiGLU as fused ops" examples/models/llama2_7b_layer.json \
    "attn_residual post_attention_layernorm" "gate_silu swiglu"
# A lone gelu op and LayerNorms: nothing to fuse.
expect_groups "GPT-2 block: no group" examples/models/gpt2_block.json
expect_groups "BERT layer: no group" examples/models/bert_base_layer.json

# The other forms, as torch.export writes them (a binary op with a scalar
# takes it in attrs.scalar), operands commuted where the source allows.
n() {   # n NAME OP 'INPUTS' [ATTRS]
    printf '{"name": "%s", "op": "%s", "inputs": [%s], "outputs": ["%s"]%s},\n' \
        "$1" "$2" "$3" "$1" "${4:+, \"attrs\": $4}"
}
{
    cat <<'JSON'
{"format": "fuseeng.model/1", "name": "forms", "dims": {"T": 64},
 "tensors": {"x": {"shape": ["T", 256], "dtype": "f32", "kind": "input"},
             "r": {"shape": ["T", 256], "dtype": "f32", "kind": "input"},
             "g": {"shape": ["T", 256], "dtype": "f32", "kind": "input"},
             "u": {"shape": ["T", 256], "dtype": "f32", "kind": "input"},
             "w": {"shape": [256], "dtype": "f32", "kind": "weight"}},
 "nodes": [
JSON
    # x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w, after h = r + x
    n h add '"r", "x"'
    n n1_sq pow '"h"' '{"scalar": 2}'
    n n1_mean mean '"n1_sq"' '{"axes": [-1], "keepdim": true}'
    n n1_eps add '"n1_mean"' '{"scalar": 1e-6}'
    n n1_rs rsqrt '"n1_eps"'
    n n1_x mul '"h", "n1_rs"'
    n n1 mul '"n1_x", "w"'
    # the same without an add before it, x * x for the square, eps first
    n n2_sq mul '"n1", "n1"'
    n n2_mean mean '"n2_sq"' '{"axes": [-1], "keepdim": true}'
    n n2_eps add '"n2_mean"' '{"scalar": 1e-5, "scalar_index": 0}'
    n n2_rs rsqrt '"n2_eps"'
    n n2_x mul '"n2_rs", "n1"'
    n n2 mul '"w", "n2_x"'
    # g * sigmoid(g) * u, written u * (sigmoid(g) * g)
    n s_sig sigmoid '"g"'
    n s_act mul '"s_sig", "g"'
    n swiglu mul '"u", "s_act"'
    # x * 0.5 * (1 + erf(x / sqrt 2))
    n e_half mul '"n2"' '{"scalar": 0.5}'
    n e_div div '"n2"' '{"scalar": 1.4142135623730951}'
    n e_erf erf '"e_div"'
    n e_one add '"e_erf"' '{"scalar": 1.0}'
    n gelu_erf mul '"e_half", "e_one"'
    # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x * x * x))), f32 constants
    n t_half mul '"swiglu"' '{"scalar": 0.5, "scalar_index": 0}'
    n t_x2 mul '"swiglu", "swiglu"'
    n t_x3 mul '"t_x2", "swiglu"'
    n t_c mul '"t_x3"' '{"scalar": 0.044714998453855515}'
    n t_in add '"t_c", "swiglu"'
    n t_s mul '"t_in"' '{"scalar": 0.7978845834732056}'
    n t_tanh tanh '"t_s"'
    n t_one add '"t_tanh"' '{"scalar": 1.0}'
    n gelu_tanh mul '"t_one", "t_half"'
    # look-alikes: silu then add; a norm without eps; tanh GELU with a wrong constant
    n l_silu silu '"gelu_tanh"'
    n l_add add '"l_silu", "u"'
    n l_sq mul '"l_add", "l_add"'
    n l_mean mean '"l_sq"' '{"axes": [-1], "keepdim": true}'
    n l_rs rsqrt '"l_mean"'
    n l_x mul '"l_add", "l_rs"'
    n l_norm mul '"l_x", "w"'
    n l_half mul '"l_norm"' '{"scalar": 0.5}'
    n l_x3 pow '"l_norm"' '{"scalar": 3}'
    n l_c mul '"l_x3"' '{"scalar": 0.05}'
    n l_in add '"l_norm", "l_c"'
    n l_s mul '"l_in"' '{"scalar": 0.7978845608028654}'
    n l_tanh tanh '"l_s"'
    n l_one add '"l_tanh"' '{"scalar": 1.0}'
    printf '%s\n' '{"name": "out", "op": "mul", "inputs": ["l_half", "l_one"], "outputs": ["out"]}'
    printf '%s\n' '], "outputs": ["out", "gelu_erf"]}'
} >"$T/forms.json"
expect_groups "general forms: commuted operands, x * x, sigmoid SwiGLU, erf GELU, f32 constants" "$T/forms.json" \
    "h n1_sq n1_mean n1_eps n1_rs n1_x n1" \
    "n2_sq n2_mean n2_eps n2_rs n2_x n2" \
    "s_sig s_act swiglu" \
    "e_half e_div e_erf e_one gelu_erf" \
    "t_half t_x2 t_x3 t_c t_in t_s t_tanh t_one gelu_tanh"
expect_ok "their reasons" '^  fuse +\[s_sig, s_act, swiglu\] +SwiGLU: sigmoid\+mul\+mul$' \
    "$FUSEENG" run "$T/forms.json" --policy llm_patterns --explain
finish
