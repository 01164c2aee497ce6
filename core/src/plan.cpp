#include "scalelab/core/plan.h"

#include "scalelab/core/collectives.h"
#include "scalelab/core/pipeline.h"
#include "scalelab/core/steptime.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

namespace scalelab::core {

namespace {

// JSON paths of the scenario keys, as error messages name them.
const std::string kLayers = "plan.model.layers";
const std::string kHidden = "plan.model.hidden";
const std::string kHeads = "plan.model.heads";
const std::string kKvHeads = "plan.model.kv_heads";
const std::string kFfn = "plan.model.ffn_hidden";
const std::string kVocab = "plan.model.vocab";
const std::string kExperts = "plan.model.experts";
const std::string kTopK = "plan.model.top_k";
const std::string kExpertFfn = "plan.model.expert_ffn_hidden";
const std::string kShared = "plan.model.shared_experts";
const std::string kDense = "plan.model.dense_layers";
const std::string kSequence = "plan.sequence";
const std::string kMicroBatch = "plan.micro_batch";
const std::string kGlobalBatch = "plan.global_batch";
const std::string kGpus = "plan.gpus";
const std::string kTensor = "plan.tensor_parallel";
const std::string kPipeline = "plan.pipeline_parallel";
const std::string kVirtual = "plan.virtual_stages";
const std::string kExpertParallel = "plan.expert_parallel";
const std::string kRecompute = "plan.recompute";
const std::string kZeroStage = "plan.zero_stage";
const std::string kWeightBytes = "plan.weight_bytes";
const std::string kGradBytes = "plan.grad_bytes";
const std::string kOptimizerBytes = "plan.optimizer_bytes";
const std::string kGpuMemory = "plan.gpu_memory_gib";

std::string str(std::int64_t v)
{
    return std::to_string(v);
}

Ratio whole(std::int64_t v)
{
    return Ratio{v, 1};
}

// Exact arithmetic on the non-negative fractions byte counts are kept in. Cross-cancelling
// before multiplying keeps the intermediate numbers small; what still passes 2^63 is refused.
Ratio add(const Ratio& a, const Ratio& b, const std::string& field)
{
    const std::int64_t g = std::gcd(a.denominator, b.denominator);
    const std::int64_t den = checkedMul(a.denominator / g, b.denominator, field);
    const std::int64_t num = checkedAdd(checkedMul(a.numerator, b.denominator / g, field),
                                        checkedMul(b.numerator, a.denominator / g, field), field);
    return makeRatio(num, den);
}

Ratio mul(const Ratio& a, const Ratio& b, const std::string& field)
{
    const std::int64_t g1 = std::max<std::int64_t>(1, std::gcd(a.numerator, b.denominator));
    const std::int64_t g2 = std::max<std::int64_t>(1, std::gcd(b.numerator, a.denominator));
    return makeRatio(checkedMul(a.numerator / g1, b.numerator / g2, field),
                     checkedMul(a.denominator / g2, b.denominator / g1, field));
}

Ratio mul(const Ratio& a, std::int64_t k, const std::string& field)
{
    return mul(a, whole(k), field);
}

// a < b for non-negative fractions without forming a.n * b.d: compare the whole parts, then
// the reciprocals of what is left (a continued-fraction walk, like Euclid's algorithm).
bool less(Ratio a, Ratio b)
{
    for (;;) {
        const std::int64_t qa = a.numerator / a.denominator;
        const std::int64_t qb = b.numerator / b.denominator;
        if (qa != qb)
            return qa < qb;
        const std::int64_t ra = a.numerator % a.denominator;
        const std::int64_t rb = b.numerator % b.denominator;
        if (ra == 0)
            return rb != 0;
        if (rb == 0)
            return false;
        // ra/da < rb/db  <=>  db/rb < da/ra
        const Ratio nextA{b.denominator, rb};
        const Ratio nextB{a.denominator, ra};
        a = nextA;
        b = nextB;
    }
}

// ---------------------------------------------------------------------------------------------
// Shape

void checkShape(const ModelShape& m)
{
    require(m.layers >= 1 && m.layers <= kMaxPlanLayers, kLayers,
            "a whole number in 1.." + str(kMaxPlanLayers));
    require(m.hidden >= 1, kHidden, "a whole number >= 1");
    require(m.heads >= 1, kHeads, "a whole number >= 1");
    require(m.hidden % m.heads == 0, kHeads,
            "a divisor of hidden: hidden " + str(m.hidden) + " is not a multiple of heads "
                + str(m.heads));
    if (m.kvHeads) {
        require(*m.kvHeads >= 1, kKvHeads, "a whole number >= 1");
        require(m.heads % *m.kvHeads == 0, kKvHeads,
                "a divisor of heads: heads " + str(m.heads) + " is not a multiple of kv_heads "
                    + str(*m.kvHeads));
    }
    require(m.ffnHidden >= 1, kFfn, "a whole number >= 1");
    require(m.vocab >= 1, kVocab, "a whole number >= 1");
    require(m.experts >= 0, kExperts, "a whole number >= 0 (0 for a dense model)");
    if (m.expertFfnHidden)
        require(*m.expertFfnHidden >= 1, kExpertFfn, "a whole number >= 1");
    require(m.sharedExperts >= 0, kShared, "a whole number >= 0");
    require(m.denseLayers >= 0, kDense, "a whole number >= 0");
    if (m.experts > 0) {
        require(m.topK >= 1 && m.topK <= m.experts, kTopK,
                "a whole number in 1..experts (" + str(m.experts) + ")");
        require(m.denseLayers <= m.layers, kDense,
                "at most layers (" + str(m.layers) + "): dense_layers " + str(m.denseLayers)
                    + " is more");
    } else {
        require(m.topK >= 0, kTopK, "a whole number >= 0");
    }
}

/// The shape's numbers with defaults applied, for a shape that passed checkShape.
struct Dims {
    std::int64_t layers, h, heads, kvDim, ffn, expertFfn, vocab, experts, topK, shared;
    std::int64_t moeLayers; // layers with an MoE MLP
    std::int64_t mats; // matrices per MLP: 3 gated, 2 plain
};

Dims dimsOf(const ModelShape& m)
{
    Dims d{};
    d.layers = m.layers;
    d.h = m.hidden;
    d.heads = m.heads;
    // Key and value are kv_heads heads of the query's head width h / a.
    d.kvDim = kvHeadsOf(m) * (m.hidden / m.heads);
    d.ffn = m.ffnHidden;
    d.expertFfn = expertFfnHiddenOf(m);
    d.vocab = m.vocab;
    d.experts = m.experts;
    d.topK = m.experts > 0 ? m.topK : 0;
    d.shared = m.experts > 0 ? m.sharedExperts : 0;
    d.moeLayers = m.experts > 0 ? m.layers - m.denseLayers : 0;
    d.mats = m.gatedMlp ? 3 : 2;
    return d;
}

ParameterCount countUnchecked(const ModelShape& m)
{
    const Dims d = dimsOf(m);
    const std::int64_t denseLayers = d.layers - d.moeLayers;
    ParameterCount c;
    // Attention: query and output h x h, key and value h x (h kv / a) each.
    const std::int64_t attentionPerLayer =
        checkedAdd(checkedMul(2, checkedMul(d.h, d.h, kHidden), kHidden),
                   checkedMul(2, checkedMul(d.h, d.kvDim, kHidden), kHidden), kHidden);
    c.attention = checkedMul(d.layers, attentionPerLayer, kHidden);
    // MLP: 2 or 3 matrices of h x width.
    const std::int64_t denseMlpPerLayer = checkedMul(d.mats, checkedMul(d.h, d.ffn, kFfn), kFfn);
    c.denseMlp = checkedMul(denseLayers, denseMlpPerLayer, kFfn);
    const std::int64_t perExpert =
        checkedMul(d.mats, checkedMul(d.h, d.expertFfn, kExpertFfn), kExpertFfn);
    c.routedExperts = checkedMul(d.moeLayers, checkedMul(d.experts, perExpert, kExperts), kExperts);
    c.sharedExperts = checkedMul(d.moeLayers, checkedMul(d.shared, perExpert, kShared), kShared);
    // The router scores every expert from the token's hidden vector: h x experts.
    c.routers = checkedMul(d.moeLayers, checkedMul(d.h, d.experts, kExperts), kExperts);
    // Two norms per layer and the final one, each a vector of h.
    c.norms = checkedMul(checkedAdd(checkedMul(2, d.layers, kLayers), 1, kLayers), d.h, kHidden);
    c.embedding = checkedMul(d.vocab, d.h, kVocab);
    c.outputLayer = m.tiedEmbeddings ? 0 : c.embedding;
    std::int64_t total = 0;
    for (const std::int64_t part : {c.attention, c.denseMlp, c.routedExperts, c.sharedExperts,
                                    c.routers, c.norms, c.embedding, c.outputLayer})
        total = checkedAdd(total, part, kHidden);
    c.total = total;
    // A token passes through top_k of the routed experts of each MoE layer, all else it uses.
    const std::int64_t usedExperts =
        checkedMul(d.moeLayers, checkedMul(d.topK, perExpert, kTopK), kTopK);
    c.active = checkedAdd(c.total - c.routedExperts, usedExperts, kTopK);
    return c;
}

// ---------------------------------------------------------------------------------------------
// Activations (Korthikanti et al. 2022, Table 2, rebuilt from the tensors behind each term)

/// Bytes one layer keeps per token of the microbatch (divide nothing yet): `replicated` are the
/// tensors tensor parallelism leaves whole on each rank, `split` those it cuts t ways, `scores`
/// the attention score tensors (5 a s^2 b / (s b) = 5 a s per token).
struct LayerTerms {
    std::int64_t replicated = 0;
    std::int64_t split = 0;
    std::int64_t scores = 0;
};

LayerTerms layerTerms(const PlanInputs& in, bool moeLayer)
{
    const Dims d = dimsOf(in.model);
    const std::string& f = kSequence;
    LayerTerms t;
    // Whole on every tensor-parallel rank (10 sbh for Table 2's layer): the two norm inputs
    // (2 + 2), the input shared by Q, K and V (2), the attention dropout mask (1 byte a
    // value), the MLP's input (2) and its dropout mask (1).
    std::int64_t replicated = checkedMul(10, d.h, f);
    // An MoE layer also keeps, for every routed expert a token goes to, the expert's own
    // 2-byte copy of the token (its first matrix's input); shared experts read the MLP input.
    if (moeLayer)
        replicated = checkedAdd(replicated, checkedMul(2, checkedMul(d.topK, d.h, f), f), f);
    // Split t ways (24 sbh for Table 2's layer): Q (2h), K and V (2 kv_dim each, h without
    // grouped-query attention), the attention output entering the output projection (2h).
    std::int64_t split = checkedAdd(checkedMul(4, d.h, f), checkedMul(4, d.kvDim, f), f);
    // MLP interior: a plain MLP keeps its activation's input and the second matrix's input, 2
    // bytes each of width f (16 sbh at f = 4h); a gated one keeps both halves entering the
    // gate and the product entering the third matrix (6 bytes of width f).
    const std::int64_t perWidth = in.model.gatedMlp ? 6 : 4;
    if (moeLayer) {
        const std::int64_t experts = checkedAdd(d.topK, d.shared, f);
        split = checkedAdd(split, checkedMul(experts, checkedMul(perWidth, d.expertFfn, f), f), f);
    } else {
        split = checkedAdd(split, checkedMul(perWidth, d.ffn, f), f);
    }
    t.replicated = replicated;
    t.split = split;
    // Softmax output (2), its dropout mask (1) and the dropout's output (2) per score.
    t.scores = checkedMul(5, checkedMul(in.model.heads, in.sequence, f), f);
    return t;
}

/// The recipe a per-layer figure is computed under.
struct Recipe {
    std::int64_t t = 1;
    bool sequenceParallel = false;
    Recompute recompute = Recompute::None;
};

Recipe recipeOf(const PlanInputs& in)
{
    return Recipe{in.tensorParallel, in.sequenceParallel, in.recompute};
}

Recipe recipeOf(const PlanInputs& in, ActivationVariant variant)
{
    switch (variant) {
    case ActivationVariant::NoParallelism:
        return Recipe{1, false, Recompute::None};
    case ActivationVariant::TensorParallel:
        return Recipe{in.tensorParallel, false, Recompute::None};
    case ActivationVariant::TensorSequenceParallel:
        return Recipe{in.tensorParallel, true, Recompute::None};
    case ActivationVariant::TensorSelective:
        return Recipe{in.tensorParallel, false, Recompute::Selective};
    case ActivationVariant::TensorSequenceSelective:
        return Recipe{in.tensorParallel, true, Recompute::Selective};
    case ActivationVariant::FullRecompute:
        break;
    }
    return Recipe{in.tensorParallel, false, Recompute::Full};
}

/// Per-layer bytes per GPU per microbatch: s b (R (SP ? 1 : t) + S + scores) / t, scores
/// dropped by selective recompute; full recompute keeps the 2sbh input (2sbh / t with SP).
Ratio layerBytes(const PlanInputs& in, const Recipe& r, bool moeLayer)
{
    const std::string& f = kSequence;
    const std::int64_t tokens = checkedMul(in.sequence, in.microBatch, f);
    const std::int64_t replicatedScale = r.sequenceParallel ? 1 : r.t;
    if (r.recompute == Recompute::Full) {
        const std::int64_t input = checkedMul(2, in.model.hidden, f);
        return makeRatio(checkedMul(tokens, checkedMul(input, replicatedScale, f), f), r.t);
    }
    const LayerTerms terms = layerTerms(in, moeLayer);
    std::int64_t perToken =
        checkedAdd(checkedMul(terms.replicated, replicatedScale, f), terms.split, f);
    if (r.recompute == Recompute::None)
        perToken = checkedAdd(perToken, terms.scores, f);
    return makeRatio(checkedMul(tokens, perToken, f), r.t);
}

// ---------------------------------------------------------------------------------------------
// Layout

/// gpus = d t p. When the layout does not divide, the key blamed is the one a person most likely
/// got wrong: with a round GPU count (a multiple of the power of two at or above t p), the
/// parallel degree that does not divide it; otherwise the GPU count.
void requireLayoutDivides(const PlanInputs& in)
{
    const std::int64_t t = in.tensorParallel, p = in.pipelineParallel, gpus = in.gpus;
    const bool divides = gpus % t == 0 && (gpus / t) % p == 0;
    if (divides)
        return;
    std::int64_t roundTo = 1;
    while (roundTo < gpus && (roundTo < t || roundTo / t < p)) // roundTo >= t p, without a product
        roundTo *= 2;
    if (gpus % roundTo == 0) {
        require(gpus % t == 0, kTensor,
                "a divisor of gpus (" + str(gpus) + "); " + str(t) + " is not");
        require(false, kPipeline,
                "a divisor of gpus / tensor_parallel = " + str(gpus) + " / " + str(t) + " = "
                    + str(gpus / t) + "; " + str(p) + " is not");
    }
    require(false, kGpus,
            "a multiple of tensor_parallel x pipeline_parallel = " + str(t) + " x " + str(p)
                + "; gpus " + str(gpus) + " is not");
}

void checkRanges(const PlanInputs& in)
{
    checkShape(in.model);
    require(in.sequence >= 1, kSequence, "a whole number >= 1");
    require(in.microBatch >= 1, kMicroBatch, "a whole number >= 1");
    require(in.globalBatch >= 1, kGlobalBatch, "a whole number >= 1");
    require(in.gpus >= 1, kGpus, "a whole number >= 1");
    require(in.tensorParallel >= 1, kTensor, "a whole number >= 1");
    require(in.model.heads % in.tensorParallel == 0, kTensor,
            "a divisor of heads: heads " + str(in.model.heads)
                + " is not a multiple of tensor_parallel " + str(in.tensorParallel));
    require(in.pipelineParallel >= 1, kPipeline, "a whole number >= 1");
    require(in.virtualStages >= 1, kVirtual, "a whole number >= 1");
    require(in.pipelineParallel <= in.model.layers, kPipeline,
            "at most layers (" + str(in.model.layers) + ")");
    // p and v are now at most kMaxPlanLayers each, so p v cannot wrap.
    require(in.virtualStages <= in.model.layers
                && in.pipelineParallel * in.virtualStages <= in.model.layers,
            kVirtual,
            "small enough that pipeline_parallel x virtual_stages <= layers: "
                + str(in.pipelineParallel) + " x " + str(in.virtualStages) + " > "
                + str(in.model.layers));
    require(in.expertParallel >= 1, kExpertParallel, "a whole number >= 1");
    require(in.recompute == Recompute::None || in.recompute == Recompute::Selective
                || in.recompute == Recompute::Full,
            kRecompute, "one of \"none\", \"selective\", \"full\"");
    require(in.zeroStage >= 0 && in.zeroStage <= 3, kZeroStage, "a whole number in 0..3");
    require(in.weightBytes >= 0, kWeightBytes, "a whole number >= 0");
    require(in.gradBytes >= 0, kGradBytes, "a whole number >= 0");
    require(in.optimizerBytes >= 0, kOptimizerBytes, "a whole number >= 0");
    require(std::isfinite(in.gpuMemoryGib) && in.gpuMemoryGib > 0, kGpuMemory,
            "a finite number > 0 (GiB)");

    requireLayoutDivides(in);
    const std::int64_t d = in.gpus / (in.tensorParallel * in.pipelineParallel);
    std::int64_t perStep = 0;
    const bool batchWraps = __builtin_mul_overflow(in.microBatch, d, &perStep);
    require(!batchWraps && in.globalBatch % perStep == 0, kGlobalBatch,
            "a multiple of micro_batch x data-parallel size = " + str(in.microBatch) + " x "
                + str(d) + " (data-parallel size = gpus / "
                + "(tensor_parallel x pipeline_parallel) = " + str(in.gpus) + " / ("
                + str(in.tensorParallel) + " x " + str(in.pipelineParallel) + ")); "
                + str(in.globalBatch) + " is not");
    if (in.model.experts == 0) {
        require(in.expertParallel == 1, kExpertParallel, "1 for a dense model (experts = 0)");
    } else {
        require(in.model.experts % in.expertParallel == 0, kExpertParallel,
                "a divisor of experts: experts " + str(in.model.experts)
                    + " is not a multiple of expert_parallel " + str(in.expertParallel));
        require(d % in.expertParallel == 0, kExpertParallel,
                "a divisor of the data-parallel size " + str(d) + " (gpus / (tensor_parallel x "
                    + "pipeline_parallel)); expert_parallel " + str(in.expertParallel) + " is not");
    }
}

/// Chunk c of the p v chunks (in model order) holds layers [start[c], start[c + 1]).
std::vector<std::int64_t> chunkStarts(std::int64_t layers, std::int64_t chunks)
{
    const std::vector<std::int64_t> sizes = arraySplitSizes(layers, chunks);
    std::vector<std::int64_t> starts(sizes.size() + 1, 0);
    for (std::size_t c = 0; c < sizes.size(); ++c)
        starts[c + 1] = starts[c] + sizes[c];
    return starts;
}

ZeroStage zeroStageOf(std::int64_t stage)
{
    switch (stage) {
    case 0:
        return ZeroStage::DataParallel;
    case 1:
        return ZeroStage::Zero1;
    case 2:
        return ZeroStage::Zero2;
    default:
        return ZeroStage::Zero3;
    }
}

Ratio zeroFigure(const ZeroResult& r, std::int64_t stage)
{
    switch (stage) {
    case 0:
        return r.dp;
    case 1:
        return r.zero1;
    case 2:
        return r.zero2;
    default:
        return r.zero3;
    }
}

/// The model state of `parameters` weights replicated over `ranks` data-parallel ranks, as the
/// zero section computes it, with the breakdown by kind and the gradient traffic per step.
struct StatePart {
    ZeroStageBytes kinds;
    Ratio total;
    Ratio traffic;
};

StatePart statePart(const PlanInputs& in, std::int64_t parameters, std::int64_t ranks,
                    std::int64_t microbatches)
{
    // The zero module names its own fields on overflow; refuse here first, naming ours. Its
    // largest intermediate is below P (2w + 2g + o) (n + 1).
    const std::int64_t perParam = in.weightBytes * 2 + in.gradBytes * 2 + in.optimizerBytes;
    const std::string& blame =
        in.optimizerBytes >= in.weightBytes && in.optimizerBytes >= in.gradBytes
        ? kOptimizerBytes
        : (in.weightBytes >= in.gradBytes ? kWeightBytes : kGradBytes);
    (void)checkedMul(checkedMul(parameters, perParam, blame), ranks + 1, blame);

    const ZeroInputs z{parameters, ranks, in.weightBytes, in.gradBytes, in.optimizerBytes};
    StatePart part;
    part.kinds = zeroStageBytes(z, zeroStageOf(in.zeroStage));
    part.total = zeroFigure(computeZeroUnchecked(z), in.zeroStage);
    // Data-parallel traffic per step, as the zero section's ring model counts it for one
    // batch. Plain DP and ZeRO-1 accumulate whole gradients over the step's microbatches and
    // communicate once; ZeRO-2 reduce-scatters each microbatch's gradients (it keeps no whole
    // copy to accumulate in), ZeRO-3 also gathers the weights again for every microbatch.
    const ZeroTraffic traffic = zeroTraffic(z, LinkModel{});
    const std::string& f = kGlobalBatch;
    switch (in.zeroStage) {
    case 0:
        part.traffic = traffic.dp.bytes;
        break;
    case 1:
        part.traffic = traffic.zero12.bytes;
        break;
    case 2: {
        // zero12 holds one reduce-scatter of the gradients; the other m - 1 come on top.
        const Ratio gradients =
            mul(makeRatio(ranks - 1, ranks), checkedMul(parameters, in.gradBytes, kGradBytes), f);
        part.traffic = add(traffic.zero12.bytes, mul(gradients, microbatches - 1, f), f);
        break;
    }
    default:
        part.traffic = mul(traffic.zero3.bytes, microbatches, f);
        break;
    }
    return part;
}

Ratio partBytes(const ZeroPart& p, const std::string& field)
{
    return add(p.replicated, p.sharded, field);
}

/// The largest of two fractions (the first on a tie).
Ratio maxOf(const Ratio& a, const Ratio& b)
{
    return less(a, b) ? b : a;
}

/// Activation bytes of each stage at its 1F1B peak for per-layer figures computed under `r`.
std::vector<Ratio> stageActivations(const PlanInputs& in, const Recipe& r, std::int64_t m,
                                    const std::vector<std::int64_t>& layers,
                                    const std::vector<std::int64_t>& moeLayers)
{
    const std::string& f = kSequence;
    const std::int64_t p = in.pipelineParallel;
    const std::int64_t v = in.virtualStages;
    const Ratio dense = layerBytes(in, r, false);
    const Ratio moe = in.model.experts > 0 ? layerBytes(in, r, true) : whole(0);
    // Interleaving keeps more in flight on the first stage: 1 + (p - 1)/(p v) (Narayanan et
    // al. 2021, as section 4.2.3 of Korthikanti et al. quotes it).
    const Ratio interleave = v > 1 ? makeRatio(p * v + p - 1, p * v) : whole(1);
    const std::int64_t tokens = checkedMul(in.sequence, in.microBatch, f);
    const std::int64_t splitScale = r.sequenceParallel ? r.t : 1;
    std::vector<Ratio> out;
    out.reserve(static_cast<std::size_t>(p));
    for (std::int64_t i = 0; i < p; ++i) {
        const auto s = static_cast<std::size_t>(i);
        // 1F1B: stage i holds the microbatches it has run forward but not yet backward.
        const std::int64_t inFlight = std::min(p - i, m);
        Ratio perMicrobatch = mul(dense, layers[s] - moeLayers[s], f);
        perMicrobatch = add(perMicrobatch, mul(moe, moeLayers[s], f), f);
        Ratio bytes = mul(mul(perMicrobatch, inFlight, f), interleave, f);
        // Section 4.3: the embedding's dropout mask, one byte per value of s b h (split along
        // the sequence by SP), for each of the first stage's microbatches in flight.
        if (i == 0) {
            const Ratio mask = makeRatio(checkedMul(tokens, in.model.hidden, f), splitScale);
            bytes = add(bytes, mul(mask, std::min(p, m), f), f);
        }
        // Section 4.3: the final norm's input and the output layer's input (2sbh each, split
        // by SP) and the fp32 logits for the cross entropy, 4 s b v / t, on the last stage.
        if (i == p - 1) {
            const Ratio inputs =
                makeRatio(checkedMul(tokens, checkedMul(4, in.model.hidden, f), f), splitScale);
            const Ratio logits =
                makeRatio(checkedMul(tokens, checkedMul(4, in.model.vocab, f), f), r.t);
            bytes = add(bytes, mul(add(inputs, logits, f), inFlight, f), f);
        }
        out.push_back(bytes);
    }
    return out;
}

struct StageLayout {
    std::vector<std::int64_t> layers;
    std::vector<std::int64_t> moeLayers;
};

StageLayout stageLayout(const PlanInputs& in)
{
    const std::int64_t p = in.pipelineParallel;
    const std::int64_t v = in.virtualStages;
    const std::vector<std::int64_t> starts = chunkStarts(in.model.layers, p * v);
    // MoE layers are the layers from dense_layers on (none for a dense model).
    const std::int64_t firstMoe = in.model.experts > 0 ? in.model.denseLayers : in.model.layers;
    StageLayout out;
    out.layers.assign(static_cast<std::size_t>(p), 0);
    out.moeLayers.assign(static_cast<std::size_t>(p), 0);
    for (std::int64_t i = 0; i < p; ++i) {
        for (std::int64_t k = 0; k < v; ++k) {
            // Stage i holds chunks i, i + p, i + 2p, ... (model part k p + i).
            const auto c = static_cast<std::size_t>(k * p + i);
            const std::int64_t begin = starts[c];
            const std::int64_t end = starts[c + 1];
            out.layers[static_cast<std::size_t>(i)] += end - begin;
            out.moeLayers[static_cast<std::size_t>(i)] +=
                std::max<std::int64_t>(0, end - std::max(begin, firstMoe));
        }
    }
    return out;
}

/// Whether peak <= gib x 2^30 exactly (the capacity is a double, the peak a fraction).
bool fitsIn(const Ratio& peak, double gib)
{
    const double capacity = std::ldexp(gib, 30);
    if (capacity >= 0x1p63)
        return true;
    const double whole = std::floor(capacity);
    const auto wholeBytes = static_cast<std::int64_t>(whole);
    const std::int64_t q = peak.numerator / peak.denominator;
    if (q != wholeBytes)
        return q < wholeBytes;
    const std::int64_t r = peak.numerator % peak.denominator;
    return static_cast<double>(r) / static_cast<double>(peak.denominator) <= capacity - whole;
}

/// Parameters one GPU holds of each kind of layer and of the vocabulary, after tensor
/// parallelism (and expert parallelism for the routed experts).
struct LayerWeights {
    std::int64_t attention = 0; ///< the four attention matrices' share
    std::int64_t norms = 0; ///< both layer norms, whole on every rank as in Megatron
    std::int64_t denseMlp = 0; ///< a dense MLP's share
    std::int64_t moeLocal = 0; ///< shared experts' share plus the whole router
    std::int64_t routedLocal = 0; ///< the routed experts this GPU owns
    std::int64_t vocabShare = 0; ///< the embedding's (or output layer's) share
};

LayerWeights layerWeights(const PlanInputs& in, const Dims& dims)
{
    // Every matrix has one side of width h, and t divides a, which divides h, so h / t is whole
    // and each tensor-parallel share below is exact.
    const std::int64_t hShare = dims.h / in.tensorParallel;
    const std::string& fp = kHidden;
    LayerWeights w;
    w.attention = checkedAdd(checkedMul(2, checkedMul(dims.h, hShare, fp), fp),
                             checkedMul(2, checkedMul(hShare, dims.kvDim, fp), fp), fp);
    w.norms = checkedMul(2, dims.h, fp);
    w.denseMlp = checkedMul(dims.mats, checkedMul(hShare, dims.ffn, kFfn), kFfn);
    const std::int64_t oneExpert =
        checkedMul(dims.mats, checkedMul(hShare, dims.expertFfn, kExpertFfn), kExpertFfn);
    // Shared experts are split like a dense MLP; the router stays whole.
    w.moeLocal = checkedAdd(checkedMul(dims.shared, oneExpert, kShared),
                            checkedMul(dims.h, dims.experts, kExperts), kExperts);
    w.routedLocal = checkedMul(dims.experts / in.expertParallel, oneExpert, kExperts);
    w.vocabShare = checkedMul(dims.vocab, hShare, kVocab);
    return w;
}

/// The parameters stage `i` of `p` holds on one GPU, and of those its routed experts'.
void stageParameters(const PlanInputs& in, const Dims& dims, const LayerWeights& w, std::int64_t i,
                     PlanStage& st)
{
    const std::int64_t p = in.pipelineParallel;
    const std::string& fp = kHidden;
    const std::int64_t denseCount = st.layers - st.moeLayers;
    std::int64_t params = checkedMul(st.layers, checkedAdd(w.attention, w.norms, fp), fp);
    params = checkedAdd(params, checkedMul(denseCount, w.denseMlp, kFfn), kFfn);
    params = checkedAdd(params, checkedMul(st.moeLayers, w.moeLocal, kExperts), kExperts);
    st.expertParameters = checkedMul(st.moeLayers, w.routedLocal, kExperts);
    params = checkedAdd(params, st.expertParameters, kExperts);
    if (i == 0)
        params = checkedAdd(params, w.vocabShare, kVocab);
    if (i == p - 1) {
        params = checkedAdd(params, dims.h, kVocab); // final norm
        // The output layer; a tied one is the embedding itself unless it lives elsewhere.
        if (!in.model.tiedEmbeddings || p > 1)
            params = checkedAdd(params, w.vocabShare, kVocab);
    }
    st.parameters = params;
}

/// What one stage sends per step: tensor-parallel, pipeline and expert traffic. Data-parallel
/// traffic comes with the model state (stageModelState).
void stageCommunication(const PlanInputs& in, const Dims& dims, std::int64_t i, std::int64_t m,
                        PlanStage& st)
{
    const std::int64_t t = in.tensorParallel;
    const std::int64_t p = in.pipelineParallel;
    const std::int64_t v = in.virtualStages;
    const std::int64_t ep = in.expertParallel;
    const std::string& f = kSequence;
    const std::int64_t tokens = checkedMul(in.sequence, in.microBatch, f);
    const std::int64_t activationTensor = checkedMul(checkedMul(2, tokens, f), dims.h, f);
    const bool full = in.recompute == Recompute::Full;
    CommunicationBytes& c = st.communication;
    // Tensor parallel: per layer and microbatch, 2 all-reduces of the 2sbh activations in
    // forward and 2 in backward (with SP, all-gathers and reduce-scatters of the same total),
    // each a ring all-reduce sending 2(t-1)/t of the tensor; full recomputation runs the
    // forward, and its 2 all-reduces, once more.
    if (t > 1) {
        const std::int64_t collectives = full ? 6 : 4;
        (void)checkedMul(checkedMul(2, t, f), activationTensor, f); // ring's intermediate
        const Ratio ring = ringAllReduceBytes(activationTensor, t);
        c.tensorParallel = mul(ring, checkedMul(checkedMul(collectives, st.layers, f), m, f), f);
    }
    // Pipeline: a stage sends each microbatch's activations on to the next stage from every
    // chunk but the model's last, and gradients back from every chunk but the first.
    if (p > 1) {
        const std::int64_t sends = (v - (i == p - 1 ? 1 : 0)) + (v - (i == 0 ? 1 : 0));
        const Ratio message =
            makeRatio(activationTensor, in.sequenceParallel ? t : 1); // SP keeps it split
        c.pipeline = mul(message, checkedMul(sends, m, f), f);
    }
    // Expert: per MoE layer and microbatch, dispatch and combine in forward and backward (plus
    // the forward pair again under full recomputation), each moving the GPU's tokens times
    // top_k hidden vectors of 2 bytes, of which (ep - 1)/ep leave the GPU.
    if (in.model.experts > 0 && ep > 1) {
        const std::int64_t allToAlls = full ? 6 : 4;
        const Ratio slots =
            makeRatio(checkedMul(activationTensor, dims.topK, f), in.sequenceParallel ? t : 1);
        const Ratio leaving = mul(slots, makeRatio(ep - 1, ep), f);
        c.expert = mul(leaving, checkedMul(checkedMul(allToAlls, st.moeLayers, f), m, f), f);
    }
}

/// A stage's model-state bytes under ZeRO, and the data-parallel traffic that goes with them.
void stageModelState(const PlanInputs& in, std::int64_t d, std::int64_t m, PlanStage& st)
{
    // ZeRO shards each weight over the ranks that hold a copy of it: d for most, d / ep for the
    // routed experts (each expert-parallel group holds its own experts).
    const StatePart shared = statePart(in, st.parameters - st.expertParameters, d, m);
    const StatePart experts = statePart(in, st.expertParameters, d / in.expertParallel, m);
    const std::string& fb = kOptimizerBytes;
    st.weightBytes =
        add(partBytes(shared.kinds.weights, fb), partBytes(experts.kinds.weights, fb), fb);
    st.gradBytes =
        add(partBytes(shared.kinds.gradients, fb), partBytes(experts.kinds.gradients, fb), fb);
    st.optimizerBytes =
        add(partBytes(shared.kinds.optimizer, fb), partBytes(experts.kinds.optimizer, fb), fb);
    st.modelStateBytes = add(shared.total, experts.total, fb);
    // Data parallel: the ring all-reduce of the gradients once per step (ZeRO-1: a
    // reduce-scatter + an all-gather of the weights; ZeRO-2: a reduce-scatter per microbatch;
    // ZeRO-3: also the weights gathered twice per microbatch).
    st.communication.dataParallel = add(shared.traffic, experts.traffic, fb);
}

/// What stageModelState gives, from a stage with the same parameter counts.
void copyModelState(const PlanStage& from, PlanStage& to)
{
    to.weightBytes = from.weightBytes;
    to.gradBytes = from.gradBytes;
    to.optimizerBytes = from.optimizerBytes;
    to.modelStateBytes = from.modelStateBytes;
    to.communication.dataParallel = from.communication.dataParallel;
}

/// The peak stage, whether it fits, the bubble, and the largest traffic of any stage.
void summarize(const PlanInputs& in, PlanResult& out)
{
    out.peakStage = 0;
    for (std::size_t s = 1; s < out.stages.size(); ++s)
        if (less(out.stages[static_cast<std::size_t>(out.peakStage)].totalBytes,
                 out.stages[s].totalBytes))
            out.peakStage = static_cast<std::int64_t>(s);
    out.peakBytesPerGpu = out.stages[static_cast<std::size_t>(out.peakStage)].totalBytes;
    out.fits = fitsIn(out.peakBytesPerGpu, in.gpuMemoryGib);
    // The idle share of the step, f = b / (1 + b) for the bubble b over the busy time: the
    // chapter's (p-1)/(v m + p-1) when m >= p, and right when fewer microbatches than stages
    // keep the pipeline from filling.
    const double overBusy =
        pipelineBubbleOverBusy(in.pipelineParallel, out.microbatches, in.virtualStages);
    out.bubbleFraction = overBusy / (1 + overBusy);
    for (const PlanStage& st : out.stages) {
        out.communication.tensorParallel =
            maxOf(out.communication.tensorParallel, st.communication.tensorParallel);
        out.communication.dataParallel =
            maxOf(out.communication.dataParallel, st.communication.dataParallel);
        out.communication.pipeline = maxOf(out.communication.pipeline, st.communication.pipeline);
        out.communication.expert = maxOf(out.communication.expert, st.communication.expert);
    }
}

PlanResult computeUnchecked(const PlanInputs& in)
{
    const Dims dims = dimsOf(in.model);
    PlanResult out;
    out.parameters = countUnchecked(in.model);
    out.dataParallel = in.gpus / (in.tensorParallel * in.pipelineParallel);
    const std::int64_t d = out.dataParallel;
    out.microbatches = in.globalBatch / (in.microBatch * d);
    const std::int64_t m = out.microbatches;
    const Recipe recipe = recipeOf(in);
    out.denseLayerActivationBytes = layerBytes(in, recipe, false);
    out.moeLayerActivationBytes = in.model.experts > 0 ? layerBytes(in, recipe, true) : whole(0);

    const LayerWeights weights = layerWeights(in, dims);
    const StageLayout layout = stageLayout(in);
    const std::int64_t p = in.pipelineParallel;
    out.stages.resize(static_cast<std::size_t>(p));
    const std::vector<Ratio> activations =
        stageActivations(in, recipe, m, layout.layers, layout.moeLayers);
    for (std::int64_t i = 0; i < p; ++i) {
        const auto s = static_cast<std::size_t>(i);
        PlanStage& st = out.stages[s];
        st.layers = layout.layers[s];
        st.moeLayers = layout.moeLayers[s];
        stageParameters(in, dims, weights, i, st);
        const PlanStage* before = i > 0 ? &out.stages[s - 1] : nullptr;
        if (before && before->parameters == st.parameters
            && before->expertParameters == st.expertParameters)
            copyModelState(*before, st); // a function of the two counts: most stages repeat
        else
            stageModelState(in, d, m, st);
        st.inFlight = std::min(p - i, m);
        st.activationBytes = activations[s];
        st.totalBytes = add(st.modelStateBytes, st.activationBytes, kSequence);
        stageCommunication(in, dims, i, m, st);
    }
    summarize(in, out);
    return out;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Public API

std::int64_t kvHeadsOf(const ModelShape& shape)
{
    return shape.kvHeads.value_or(shape.heads);
}

std::int64_t expertFfnHiddenOf(const ModelShape& shape)
{
    return shape.expertFfnHidden.value_or(shape.ffnHidden);
}

void validate(const ModelShape& shape)
{
    checkShape(shape);
    (void)countUnchecked(shape);
}

void validate(const PlanInputs& in)
{
    checkRanges(in);
    validate(in.hardware);
    require(std::isfinite(in.trainTokens) && in.trainTokens > 0, "plan.train_tokens",
            "a finite number > 0 (tokens)");
    (void)computeUnchecked(in);
}

ParameterCount countParameters(const ModelShape& shape)
{
    checkShape(shape);
    return countUnchecked(shape);
}

std::vector<ActivationVariant> allActivationVariants()
{
    return {ActivationVariant::NoParallelism,           ActivationVariant::TensorParallel,
            ActivationVariant::TensorSequenceParallel,  ActivationVariant::TensorSelective,
            ActivationVariant::TensorSequenceSelective, ActivationVariant::FullRecompute};
}

std::string activationVariantName(ActivationVariant variant)
{
    switch (variant) {
    case ActivationVariant::NoParallelism:
        return "no parallelism";
    case ActivationVariant::TensorParallel:
        return "tensor parallel";
    case ActivationVariant::TensorSequenceParallel:
        return "tensor + sequence parallel";
    case ActivationVariant::TensorSelective:
        return "tensor parallel + selective recompute";
    case ActivationVariant::TensorSequenceSelective:
        return "tensor + sequence parallel + selective recompute";
    case ActivationVariant::FullRecompute:
        break;
    }
    return "full recompute";
}

Ratio layerActivationBytes(const PlanInputs& in, bool moeLayer)
{
    return layerBytes(in, recipeOf(in), moeLayer);
}

Ratio layerActivationBytes(const PlanInputs& in, ActivationVariant variant, bool moeLayer)
{
    return layerBytes(in, recipeOf(in, variant), moeLayer);
}

std::vector<std::int64_t> stageLayers(std::int64_t layers, std::int64_t pipelineParallel,
                                      std::int64_t virtualStages)
{
    require(layers >= 1 && layers <= kMaxPlanLayers, kLayers,
            "a whole number in 1.." + str(kMaxPlanLayers));
    require(pipelineParallel >= 1 && pipelineParallel <= layers, kPipeline,
            "a whole number in 1..layers (" + str(layers) + ")");
    require(virtualStages >= 1 && pipelineParallel * virtualStages <= layers, kVirtual,
            "a whole number >= 1 with pipeline_parallel x virtual_stages <= layers");
    PlanInputs in;
    in.model.layers = layers;
    in.model.experts = 0;
    in.pipelineParallel = pipelineParallel;
    in.virtualStages = virtualStages;
    return stageLayout(in).layers;
}

PlanResult computePlan(const PlanInputs& in)
{
    checkRanges(in);
    return computeUnchecked(in);
}

std::vector<VariantActivations> activationVariants(const PlanInputs& in)
{
    validate(in);
    const std::int64_t d = in.gpus / (in.tensorParallel * in.pipelineParallel);
    const std::int64_t m = in.globalBatch / (in.microBatch * d);
    const StageLayout layout = stageLayout(in);
    std::vector<VariantActivations> out;
    for (const ActivationVariant variant : allActivationVariants()) {
        const Recipe r = recipeOf(in, variant);
        VariantActivations va;
        va.variant = variant;
        va.denseLayerBytes = layerBytes(in, r, false);
        va.moeLayerBytes = in.model.experts > 0 ? layerBytes(in, r, true) : whole(0);
        va.stageBytes = stageActivations(in, r, m, layout.layers, layout.moeLayers);
        for (const Ratio& bytes : va.stageBytes)
            va.peakBytes = maxOf(va.peakBytes, bytes);
        out.push_back(std::move(va));
    }
    return out;
}

std::string activationScalingNote()
{
    return "Activations follow Korthikanti et al. (2022), Table 2. For sequence length s, "
           "microbatch b, hidden size h, a heads and t tensor-parallel GPUs, a GPT layer keeps "
           "34sbh + 5as\u00b2b bytes for its backward pass. Of the 34, 10 are tensors that tensor "
           "parallelism leaves whole on every GPU (the two norm inputs, the inputs of the "
           "attention and MLP, two one-byte dropout masks) and 24 are split t ways (query, key, "
           "value, the attention output, and the MLP's two 4h-wide tensors). Sequence "
           "parallelism splits the 10 along the sequence as well; selective recomputation drops "
           "the 5as\u00b2b attention scores; full recomputation keeps only the layer's 2sbh "
           "input. ScaleLab rebuilds each term from the tensor it stands for, so other shapes "
           "change only their own terms: with grouped-query attention the key and value terms "
           "shrink by kv_heads/heads; an MLP of width f keeps 4sbf (the activation's input and "
           "the second matrix's input) instead of 16sbh, and a gated MLP 6sbf (both halves "
           "entering the gate, and their product); an MoE layer keeps the MLP tensors of each "
           "of its top_k routed and shared experts, plus one 2sbh copy of the tokens for each "
           "routed expert they are sent to. Left out: the router's scores (s b x experts, "
           "under 1% of a layer here), the one layer being recomputed during backward under full "
           "recomputation, and uneven routing. Like the paper, activations are 2 bytes and "
           "dropout masks 1 byte; a model trained without dropout keeps a little less.";
}

std::string communicationNote()
{
    return "Bytes one GPU sends per optimizer step (m microbatches of s x b tokens, 2-byte "
           "activations). Tensor parallel: every layer all-reduces its 2sbh-byte output twice in "
           "forward and twice in backward (with sequence parallelism each becomes an all-gather "
           "plus a reduce-scatter: the same bytes); a ring all-reduce sends 2(t-1)/t of the "
           "tensor, so 4 x 2(t-1)/t x 2sbh per layer and microbatch (6 with full recomputation, "
           "which runs the forward again). Data parallel: once per step, a ring all-reduce of "
           "the GPU's gradients, 2(d-1)/d x P g; ZeRO-1 reduce-scatters the gradients and "
           "all-gathers the updated weights, (d-1)/d x P (g + w). ZeRO-2 keeps only its shard "
           "of the gradients, so it cannot add the microbatches' gradients up in a whole copy: "
           "it reduce-scatters each microbatch's, (d-1)/d x P (m g + w). ZeRO-3 also gathers "
           "the weights for every microbatch's forward and again for its backward, "
           "m (d-1)/d x P (2w + g) (routed experts over d/ep ranks instead of d). Pipeline: "
           "point to point, a microbatch's 2sbh activations go to the next stage and their "
           "gradients come back (2sbh/t per GPU with sequence parallelism, which keeps them "
           "split): 2 sends per microbatch and chunk on a middle stage, one fewer on the first "
           "and on the last. Expert: every MoE layer sends each token's hidden vector to its "
           "top_k experts and back (dispatch and combine) in forward and in backward, 4 "
           "all-to-alls of s b top_k x 2h bytes (s b / t tokens per GPU with sequence "
           "parallelism; 6 with full recomputation), of which (ep-1)/ep leave the GPU when "
           "routing is even.";
}

} // namespace scalelab::core
