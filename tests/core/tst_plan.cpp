// Training plan: parameter counts against published totals, Korthikanti et al.'s Table 2,
// ZeRO per stage, pipeline stages, communication per axis and the refused layouts.

#include "korthikanti.h"
#include "scalelab/core/collectives.h"
#include "scalelab/core/pipeline.h"
#include "scalelab/core/plan.h"
#include "testhelpers.h"

#include <QTest>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace scalelab::core;

namespace scalelab::core {
// Readable QCOMPARE failures for exact fractions (found by argument-dependent lookup).
char* toString(const Ratio& r)
{
    const std::string s = std::to_string(r.numerator) + "/" + std::to_string(r.denominator);
    return qstrdup(s.c_str());
}
} // namespace scalelab::core

namespace {

using i64 = std::int64_t;

Ratio frac(i64 num, i64 den = 1)
{
    return makeRatio(num, den);
}

// ---- Published shapes ------------------------------------------------------------------------

// Llama 3 8B: config.json of meta-llama/Meta-Llama-3-8B on Hugging Face
// (https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json): 32 layers, hidden
// 4096, 32 heads, 8 key/value heads, intermediate 14336, vocab 128256, SiLU-gated MLP,
// tie_word_embeddings false. Published size 8.03B (the model card's parameter count).
ModelShape llama3_8b()
{
    ModelShape m;
    m.layers = 32;
    m.hidden = 4096;
    m.heads = 32;
    m.kvHeads = 8;
    m.ffnHidden = 14336;
    m.vocab = 128256;
    m.gatedMlp = true;
    m.tiedEmbeddings = false;
    return m;
}

// Llama 3 70B: config.json of meta-llama/Meta-Llama-3-70B
// (https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json): 80 layers,
// hidden 8192, 64 heads, 8 key/value heads, intermediate 28672, vocab 128256, gated, untied.
// Published size 70.6B.
ModelShape llama3_70b()
{
    ModelShape m = llama3_8b();
    m.layers = 80;
    m.hidden = 8192;
    m.heads = 64;
    m.kvHeads = 8;
    m.ffnHidden = 28672;
    return m;
}

// Mixtral 8x7B: config.json of mistralai/Mixtral-8x7B-v0.1
// (https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json): 32 layers,
// hidden 4096, 32 heads, 8 key/value heads, intermediate 14336 per expert, 8 local experts,
// 2 experts per token, vocab 32000, untied, no shared experts, every layer MoE. Published
// (Mistral AI, "Mixtral of experts", 2023): 46.7B total, 12.9B used per token.
ModelShape mixtral8x7b()
{
    ModelShape m;
    m.layers = 32;
    m.hidden = 4096;
    m.heads = 32;
    m.kvHeads = 8;
    m.ffnHidden = 14336;
    m.vocab = 32000;
    m.experts = 8;
    m.topK = 2;
    return m;
}

// DeepSeek-V3 as its config.json states it (https://huggingface.co/deepseek-ai/DeepSeek-V3/
// blob/main/config.json): 61 layers, hidden 7168, 128 heads (num_key_value_heads 128),
// intermediate 18432 for the first_k_dense_replace = 3 dense layers, 256 routed experts of
// moe_intermediate_size 2048, 8 per token, 1 shared expert, vocab 129280, untied. Its attention
// is multi-head latent attention (q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128,
// qk_rope_head_dim 64, v_head_dim 128), which the plan's attention formula cannot express.
ModelShape deepseekV3AsConfigured()
{
    ModelShape m;
    m.layers = 61;
    m.hidden = 7168;
    m.heads = 128;
    m.kvHeads = 128;
    m.ffnHidden = 18432;
    m.vocab = 129280;
    m.experts = 256;
    m.topK = 8;
    m.expertFfnHidden = 2048;
    m.sharedExperts = 1;
    m.denseLayers = 3;
    return m;
}

// DeepSeek-V3 approximated for the plan's formula. MLA's weights per layer are 187.1M (see
// mlaAttentionParameters): the down/up projections of keys and values (20.9M) are about what
// grouped-query attention with kv_heads = heads / 4 holds (2 x 7168 x 1792 = 25.7M), and its
// query path (48.8M) about the formula's h x h query (51.4M); but its output projection reads
// heads x v_head_dim = 16384 values, 2.3 times the formula's h x h. Keeping num_key_value_heads
// = 128 overshoots the attention by 18.4M a layer and the active count by 4.5%; no kv_heads
// (a divisor of heads) lands within 2% of both published figures. So kv_heads = 32 models the
// key/value path, and one more shared expert (44.0M on each of the 58 MoE layers, weights every
// token uses) stands in for the output-projection weights the formula misses. Published
// (DeepSeek-V3 technical report and README): 671B total, 37B activated.
ModelShape deepseekV3()
{
    ModelShape m = deepseekV3AsConfigured();
    m.kvHeads = 32;
    m.sharedExperts = 2;
    return m;
}

// GPT-3 175B: Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1: 96 layers,
// d_model 12288, 96 heads, feed-forward 4 x d_model; GPT-2's 50257-token vocabulary; tied
// embeddings; plain GELU MLP. (It also has biases and learned positions, left out here.)
ModelShape gpt3_175b()
{
    ModelShape m;
    m.layers = 96;
    m.hidden = 12288;
    m.heads = 96;
    m.ffnHidden = 4 * 12288;
    m.vocab = 50257;
    m.gatedMlp = false;
    m.tiedEmbeddings = true;
    return m;
}

ModelShape shapeNamed(const QString& name)
{
    if (name == "llama3-8b")
        return llama3_8b();
    if (name == "llama3-70b")
        return llama3_70b();
    if (name == "mixtral-8x7b")
        return mixtral8x7b();
    if (name == "deepseek-v3")
        return deepseekV3();
    return gpt3_175b();
}

// MLA weights of one DeepSeek-V3 layer from its config: query down (h x 1536) with its norm,
// query up (1536 x heads (128 + 64)), key/value down (h x (512 + 64)) with its norm, key/value
// up (512 x heads (128 + 128)), output (heads 128 x h).
i64 mlaAttentionParameters()
{
    const i64 h = 7168, heads = 128, qRank = 1536, kvRank = 512, nope = 128, rope = 64, vDim = 128;
    return h * qRank + qRank + qRank * heads * (nope + rope) + h * (kvRank + rope) + kvRank
        + kvRank * heads * (nope + vDim) + heads * vDim * h;
}

// ---- Korthikanti et al. 2022, Table 2, written out -----------------------------------------

// A plan whose model is Table 2's layer: plain 4h MLP, as many key/value heads as heads.
PlanInputs table2Plan(i64 s, i64 b, i64 h, i64 a, i64 t)
{
    PlanInputs in;
    in.model.layers = 4;
    in.model.hidden = h;
    in.model.heads = a;
    in.model.kvHeads.reset();
    in.model.ffnHidden = 4 * h;
    in.model.gatedMlp = false;
    in.model.vocab = 100;
    in.model.experts = 0;
    in.sequence = s;
    in.microBatch = b;
    in.tensorParallel = t;
    in.pipelineParallel = 1;
    in.gpus = t;
    in.globalBatch = b;
    return in;
}

// The table's rows as exact fractions, straight from the paper's expressions.
Ratio table2Row(ActivationVariant v, i64 s, i64 b, i64 h, i64 a, i64 t)
{
    const i64 sbh = s * b * h;
    const i64 scores = 5 * a * s * s * b; // 5 a s^2 b
    switch (v) {
    case ActivationVariant::NoParallelism: // sbh (34 + 5as/h)
        return frac(34 * sbh + scores);
    case ActivationVariant::TensorParallel: // sbh (10 + 24/t + 5as/(ht))
        return frac(sbh * (10 * t + 24) + scores, t);
    case ActivationVariant::TensorSequenceParallel: // sbh (34/t + 5as/(ht))
        return frac(34 * sbh + scores, t);
    case ActivationVariant::TensorSelective: // sbh (10 + 24/t)
        return frac(sbh * (10 * t + 24), t);
    case ActivationVariant::TensorSequenceSelective: // sbh (34/t)
        return frac(34 * sbh, t);
    case ActivationVariant::FullRecompute: // 2sbh
        break;
    }
    return frac(2 * sbh);
}

Ratio plus(const Ratio& a, const Ratio& b)
{
    return makeRatio(a.numerator * b.denominator + b.numerator * a.denominator,
                     a.denominator * b.denominator);
}

Ratio times(const Ratio& a, const Ratio& b)
{
    return makeRatio(a.numerator * b.numerator, a.denominator * b.denominator);
}

Ratio zeroFigure(const ZeroResult& r, i64 stage)
{
    return stage == 0 ? r.dp : stage == 1 ? r.zero1 : stage == 2 ? r.zero2 : r.zero3;
}

double gib(const Ratio& r)
{
    return r.value() / double(1LL << 30);
}

// A layout mutation that validate() must refuse, and the field it must name.
struct Refusal {
    const char* name;
    const char* field;
    std::function<void(PlanInputs&)> change;
};

const std::vector<Refusal>& refusals()
{
    static const std::vector<Refusal> rows = {
        {"layers 0", "plan.model.layers",
         [](PlanInputs& in) {
             in.model.layers = 0;
         }},
        {"layers too many", "plan.model.layers",
         [](PlanInputs& in) {
             in.model.layers = kMaxPlanLayers + 1;
         }},
        {"hidden 0", "plan.model.hidden",
         [](PlanInputs& in) {
             in.model.hidden = 0;
         }},
        {"heads not dividing hidden", "plan.model.heads",
         [](PlanInputs& in) {
             in.model.heads = 30;
         }},
        {"heads negative", "plan.model.heads",
         [](PlanInputs& in) {
             in.model.heads = -32;
         }},
        {"kv_heads not dividing heads", "plan.model.kv_heads",
         [](PlanInputs& in) {
             in.model.kvHeads = 5;
         }},
        {"kv_heads 0", "plan.model.kv_heads",
         [](PlanInputs& in) {
             in.model.kvHeads = 0;
         }},
        {"ffn 0", "plan.model.ffn_hidden",
         [](PlanInputs& in) {
             in.model.ffnHidden = 0;
         }},
        {"vocab 0", "plan.model.vocab",
         [](PlanInputs& in) {
             in.model.vocab = 0;
         }},
        {"experts negative", "plan.model.experts",
         [](PlanInputs& in) {
             in.model.experts = -1;
         }},
        {"top_k above experts", "plan.model.top_k",
         [](PlanInputs& in) {
             in.model.experts = 4;
             in.model.topK = 5;
         }},
        {"top_k 0 with experts", "plan.model.top_k",
         [](PlanInputs& in) {
             in.model.experts = 4;
             in.model.topK = 0;
         }},
        {"expert ffn 0", "plan.model.expert_ffn_hidden",
         [](PlanInputs& in) {
             in.model.expertFfnHidden = 0;
         }},
        {"shared negative", "plan.model.shared_experts",
         [](PlanInputs& in) {
             in.model.sharedExperts = -1;
         }},
        {"dense layers above layers", "plan.model.dense_layers",
         [](PlanInputs& in) {
             in.model.experts = 8;
             in.model.denseLayers = 33;
         }},
        {"sequence 0", "plan.sequence",
         [](PlanInputs& in) {
             in.sequence = 0;
         }},
        {"micro_batch 0", "plan.micro_batch",
         [](PlanInputs& in) {
             in.microBatch = 0;
         }},
        {"global_batch 0", "plan.global_batch",
         [](PlanInputs& in) {
             in.globalBatch = 0;
         }},
        {"gpus 0", "plan.gpus",
         [](PlanInputs& in) {
             in.gpus = 0;
         }},
        {"gpus not a multiple of t p", "plan.gpus",
         [](PlanInputs& in) {
             in.gpus = 60;
         }},
        // The layout's odd one out is blamed: a round GPU count keeps its name out of it.
        {"pipeline_parallel not dividing gpus / t", "plan.pipeline_parallel",
         [](PlanInputs& in) {
             in.gpus = 64;
             in.tensorParallel = 8;
             in.pipelineParallel = 5;
         }},
        {"tensor_parallel not dividing a round gpus", "plan.tensor_parallel",
         [](PlanInputs& in) {
             in.model.hidden = 6144;
             in.model.heads = 48;
             in.gpus = 64;
             in.tensorParallel = 3;
             in.pipelineParallel = 1;
         }},
        {"t x p passing 2^63", "plan.tensor_parallel",
         [](PlanInputs& in) {
             in.model.layers = 16384;
             in.model.hidden = i64(1) << 52;
             in.model.heads = i64(1) << 50;
             in.tensorParallel = i64(1) << 50;
             in.pipelineParallel = 16384;
         }},
        {"tensor_parallel not dividing heads", "plan.tensor_parallel",
         [](PlanInputs& in) {
             in.tensorParallel = 3;
         }},
        {"tensor_parallel 0", "plan.tensor_parallel",
         [](PlanInputs& in) {
             in.tensorParallel = 0;
         }},
        {"pipeline above layers", "plan.pipeline_parallel",
         [](PlanInputs& in) {
             in.pipelineParallel = 33;
         }},
        {"pipeline 0", "plan.pipeline_parallel",
         [](PlanInputs& in) {
             in.pipelineParallel = 0;
         }},
        {"p v above layers", "plan.virtual_stages",
         [](PlanInputs& in) {
             in.pipelineParallel = 8;
             in.gpus = 64 * 8;
             in.virtualStages = 5;
         }},
        {"virtual 0", "plan.virtual_stages",
         [](PlanInputs& in) {
             in.virtualStages = 0;
         }},
        {"global batch not a multiple", "plan.global_batch",
         [](PlanInputs& in) {
             in.gpus = 48;
         }},
        {"expert_parallel on a dense model", "plan.expert_parallel",
         [](PlanInputs& in) {
             in.expertParallel = 2;
         }},
        {"expert_parallel not dividing experts", "plan.expert_parallel",
         [](PlanInputs& in) {
             in.model.experts = 6;
             in.expertParallel = 4;
         }},
        {"expert_parallel not dividing d", "plan.expert_parallel",
         [](PlanInputs& in) {
             in.model.experts = 32;
             in.expertParallel = 16; // d = 8
         }},
        {"expert_parallel 0", "plan.expert_parallel",
         [](PlanInputs& in) {
             in.expertParallel = 0;
         }},
        {"recompute unknown", "plan.recompute",
         [](PlanInputs& in) {
             in.recompute = static_cast<Recompute>(7);
         }},
        {"zero stage 4", "plan.zero_stage",
         [](PlanInputs& in) {
             in.zeroStage = 4;
         }},
        {"zero stage -1", "plan.zero_stage",
         [](PlanInputs& in) {
             in.zeroStage = -1;
         }},
        {"weight bytes negative", "plan.weight_bytes",
         [](PlanInputs& in) {
             in.weightBytes = -2;
         }},
        {"grad bytes negative", "plan.grad_bytes",
         [](PlanInputs& in) {
             in.gradBytes = -2;
         }},
        {"optimizer bytes negative", "plan.optimizer_bytes",
         [](PlanInputs& in) {
             in.optimizerBytes = -1;
         }},
        {"memory 0", "plan.gpu_memory_gib",
         [](PlanInputs& in) {
             in.gpuMemoryGib = 0;
         }},
        {"memory NaN", "plan.gpu_memory_gib",
         [](PlanInputs& in) {
             in.gpuMemoryGib = std::numeric_limits<double>::quiet_NaN();
         }},
        {"memory infinite", "plan.gpu_memory_gib",
         [](PlanInputs& in) {
             in.gpuMemoryGib = std::numeric_limits<double>::infinity();
         }},
        {"hidden so wide the weights pass 2^63", "plan.model.hidden",
         [](PlanInputs& in) {
             in.model.hidden = i64(1) << 40;
             in.model.heads = 8;
         }},
        {"sequence so long the scores pass 2^63", "plan.sequence",
         [](PlanInputs& in) {
             in.sequence = i64(1) << 53;
         }},
        {"optimizer bytes so large the state passes 2^63", "plan.optimizer_bytes",
         [](PlanInputs& in) {
             in.optimizerBytes = i64(1) << 53;
         }},
    };
    return rows;
}

} // namespace

class TstPlan : public QObject {
    Q_OBJECT

private slots:
    // ---- Parameter counts ---------------------------------------------------------------------

    void publishedTotals_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<double>("total");
        QTest::addColumn<double>("active"); // 0: no separate figure published
        QTest::addColumn<double>("tolerance");
        // Published totals are rounded to three significant figures, so half a percent is
        // their own rounding plus small things the formula leaves out (GPT-3's biases and
        // position table are 0.03%). DeepSeek-V3's MLA is approximated: 2% (see its shape).
        QTest::newRow("Llama 3 8B") << "llama3-8b" << 8.03e9 << 0.0 << 0.005;
        QTest::newRow("Llama 3 70B") << "llama3-70b" << 70.6e9 << 0.0 << 0.005;
        QTest::newRow("Mixtral 8x7B") << "mixtral-8x7b" << 46.7e9 << 12.9e9 << 0.005;
        QTest::newRow("DeepSeek-V3") << "deepseek-v3" << 671e9 << 37e9 << 0.02;
        QTest::newRow("GPT-3 175B") << "gpt3-175b" << 175e9 << 0.0 << 0.005;
    }

    void publishedTotals()
    {
        QFETCH(QString, model);
        QFETCH(double, total);
        QFETCH(double, active);
        QFETCH(double, tolerance);
        const ParameterCount c = countParameters(shapeNamed(model));
        const double ours = static_cast<double>(c.total);
        qInfo("%s: total %.4gB (published %.4gB, %+.2f%%), active %.4gB", qPrintable(model),
              ours / 1e9, total / 1e9, 100.0 * (ours / total - 1.0),
              static_cast<double>(c.active) / 1e9);
        QVERIFY2(std::abs(ours / total - 1.0) <= tolerance, qPrintable(QString::number(ours)));
        if (active > 0) {
            const double used = static_cast<double>(c.active);
            qInfo("  active %+.2f%% against %.4gB", 100.0 * (used / active - 1.0), active / 1e9);
            QVERIFY2(std::abs(used / active - 1.0) <= tolerance, qPrintable(QString::number(used)));
        } else {
            QCOMPARE(c.active, c.total); // dense: a token uses every weight
        }
    }

    void deepseekShapeReading()
    {
        // Checks our reading of DeepSeek-V3's config: with its MLA attention counted from the
        // config's ranks instead of the plan's formula, the shape gives DeepSeek's own figures
        // (README_WEIGHTS.md of deepseek-ai/DeepSeek-V3: 671B main-model weights, 36.6B
        // activated, which counts the output head but not the input embedding lookup).
        const ModelShape m = deepseekV3AsConfigured();
        const ParameterCount c = countParameters(m);
        const i64 mla = m.layers * mlaAttentionParameters();
        const double total = static_cast<double>(c.total - c.attention + mla);
        const double activated = static_cast<double>(c.active - c.attention + mla - c.embedding);
        QVERIFY2(std::abs(total / 671e9 - 1.0) < 0.001, qPrintable(QString::number(total)));
        QVERIFY2(std::abs(activated / 36.6e9 - 1.0) < 0.002,
                 qPrintable(QString::number(activated)));
        // The configured shape taken literally (full multi-head K and V) is close in total but
        // 4.5% over in active weights: why deepseekV3() adjusts kv_heads and shared experts.
        QVERIFY(std::abs(static_cast<double>(c.total) / 671e9 - 1.0) < 0.02);
        QVERIFY(static_cast<double>(c.active) / 37e9 - 1.0 > 0.02);
    }

    void parametersByHand()
    {
        // A shape small enough to count on paper. h = 8, a = 4 (head width 2), kv = 2 (key
        // and value 8 x 4 each), gated MLP of width 12, vocab 10, two layers.
        ModelShape m;
        m.layers = 2;
        m.hidden = 8;
        m.heads = 4;
        m.kvHeads = 2;
        m.ffnHidden = 12;
        m.vocab = 10;
        const i64 attention = 2 * (8 * 8 + 8 * 8 + 8 * 4 + 8 * 4); // q, o, k, v per layer
        const i64 mlp = 2 * (3 * 8 * 12);
        const i64 norms = 2 * 2 * 8 + 8;
        const i64 embeddings = 2 * 10 * 8;
        ParameterCount c = countParameters(m);
        QCOMPARE(c.attention, attention);
        QCOMPARE(c.denseMlp, mlp);
        QCOMPARE(c.norms, norms);
        QCOMPARE(c.total, attention + mlp + norms + embeddings);
        QCOMPARE(c.active, c.total);

        m.tiedEmbeddings = true; // one vocab x hidden matrix less
        QCOMPARE(countParameters(m).total, attention + mlp + norms + embeddings / 2);

        // MoE: the second layer has 4 experts of width 6 (plain, 2 matrices), 1 shared, top 2.
        m.tiedEmbeddings = false;
        m.gatedMlp = false;
        m.experts = 4;
        m.topK = 2;
        m.expertFfnHidden = 6;
        m.sharedExperts = 1;
        m.denseLayers = 1;
        const i64 denseMlp = 2 * 8 * 12; // the first layer, plain MLP of width 12
        const i64 expert = 2 * 8 * 6;
        const i64 router = 8 * 4;
        c = countParameters(m);
        QCOMPARE(c.denseMlp, denseMlp);
        QCOMPARE(c.routedExperts, 4 * expert);
        QCOMPARE(c.sharedExperts, expert);
        QCOMPARE(c.routers, router);
        QCOMPARE(c.total, attention + denseMlp + 5 * expert + router + norms + embeddings);
        // A token uses the dense layer, 2 of the 4 routed experts, the shared one and the router.
        QCOMPARE(c.active, attention + denseMlp + 3 * expert + router + norms + embeddings);
    }

    // ---- Korthikanti et al. 2022, Table 2 ------------------------------------------------------

    void table2_data()
    {
        QTest::addColumn<qint64>("s");
        QTest::addColumn<qint64>("b");
        QTest::addColumn<qint64>("h");
        QTest::addColumn<qint64>("a");
        QTest::addColumn<qint64>("t");
        // The paper's GPT-3 and 22B layers, and small odd ones whose figures are not whole.
        QTest::newRow("GPT-3 175B, t 8") << 2048LL << 1LL << 12288LL << 96LL << 8LL;
        QTest::newRow("22B, b 4, t 8") << 2048LL << 4LL << 6144LL << 64LL << 8LL;
        QTest::newRow("t 1") << 16LL << 2LL << 32LL << 4LL << 1LL;
        QTest::newRow("t 3, odd sizes") << 7LL << 3LL << 12LL << 3LL << 3LL;
        QTest::newRow("t 16") << 5LL << 1LL << 64LL << 16LL << 16LL;
    }

    void table2()
    {
        QFETCH(qint64, s);
        QFETCH(qint64, b);
        QFETCH(qint64, h);
        QFETCH(qint64, a);
        QFETCH(qint64, t);
        const PlanInputs in = table2Plan(s, b, h, a, t);
        for (const ActivationVariant v : allActivationVariants())
            QCOMPARE(layerActivationBytes(in, v), table2Row(v, s, b, h, a, t));

        // The plan's own recipe picks the same rows.
        PlanInputs own = in;
        const auto check = [&](bool sp, Recompute r, ActivationVariant v) {
            own.sequenceParallel = sp;
            own.recompute = r;
            return layerActivationBytes(own) == table2Row(v, s, b, h, a, t);
        };
        QVERIFY(check(false, Recompute::None, ActivationVariant::TensorParallel));
        QVERIFY(check(true, Recompute::None, ActivationVariant::TensorSequenceParallel));
        QVERIFY(check(false, Recompute::Selective, ActivationVariant::TensorSelective));
        QVERIFY(check(true, Recompute::Selective, ActivationVariant::TensorSequenceSelective));
        QVERIFY(check(false, Recompute::Full, ActivationVariant::FullRecompute));
        // Full recomputation with sequence parallelism splits the kept input: 2sbh / t.
        own.sequenceParallel = true;
        own.recompute = Recompute::Full;
        QCOMPARE(layerActivationBytes(own), frac(2 * s * b * h, t));
    }

    void table2Reduction()
    {
        // The paper's headline: for GPT-3 at t = 8, sequence parallelism and selective
        // recomputation together keep 5x less than tensor parallelism alone:
        // (10 + 24/8 + 80/8) / (34/8) = 23 / 4.25 = 92/17.
        const PlanInputs in = table2Plan(2048, 1, 12288, 96, 8);
        const Ratio base = layerActivationBytes(in, ActivationVariant::TensorParallel);
        const Ratio both = layerActivationBytes(in, ActivationVariant::TensorSequenceSelective);
        QCOMPARE(times(base, frac(both.denominator, both.numerator)), frac(92, 17));
    }

    void otherShapesScaleTheirTerms()
    {
        // From Table 2's layer, change one thing at a time and check that only the terms of
        // the tensors that changed move, by the bytes those tensors hold (s b tokens).
        const i64 s = 6, b = 2, h = 16, a = 8, t = 4;
        const PlanInputs plain = table2Plan(s, b, h, a, t);
        const i64 sb = s * b;
        for (const bool sp : {false, true}) {
            PlanInputs base = plain;
            base.sequenceParallel = sp;
            base.recompute = Recompute::Selective;
            const Ratio ref = layerActivationBytes(base);
            const i64 replicatedScale = sp ? 1 : t;

            // Grouped-query attention, kv = a / 4: K and V (2 bytes x h wide each, split t
            // ways) shrink to a quarter: 4 sbh (1 - 1/4) / t fewer bytes.
            PlanInputs gqa = base;
            gqa.model.kvHeads = a / 4;
            QCOMPARE(plus(layerActivationBytes(gqa), frac(4 * sb * h * 3, 4 * t)), ref);

            // MLP width f = 3h instead of 4h: the two f-wide tensors, 4 s b f bytes split t ways.
            PlanInputs narrow = base;
            narrow.model.ffnHidden = 3 * h;
            QCOMPARE(plus(layerActivationBytes(narrow), frac(4 * sb * h, t)), ref);

            // Gated MLP of width f = 4h: 6 s b f instead of 4 s b f, split t ways.
            PlanInputs gated = base;
            gated.model.gatedMlp = true;
            QCOMPARE(layerActivationBytes(gated), plus(ref, frac(2 * sb * 4 * h, t)));

            // MoE layer, top 2 of 4 experts of width 2h, one shared: the MLP interior becomes
            // 3 experts x 4 s b (2h), and 2 routed copies of the tokens (2 s b h each) join the
            // tensors tensor parallelism leaves whole.
            PlanInputs moe = base;
            moe.model.experts = 4;
            moe.model.topK = 2;
            moe.model.sharedExperts = 1;
            moe.model.expertFfnHidden = 2 * h;
            const Ratio expected = plus(plus(ref, frac(4 * sb * (3 * 2 * h - 4 * h), t)),
                                        frac(2 * 2 * sb * h * replicatedScale, t));
            QCOMPARE(layerActivationBytes(moe, true), expected);
            QCOMPARE(layerActivationBytes(moe, false), ref); // its dense layers are unchanged
        }
        QVERIFY(activationScalingNote().find("kv_heads/heads") != std::string::npos);
        QVERIFY(communicationNote().find("2(t-1)/t") != std::string::npos);
    }

    // ---- Stages ----------------------------------------------------------------------------

    void stageSplit_data()
    {
        QTest::addColumn<qint64>("layers");
        QTest::addColumn<qint64>("p");
        QTest::addColumn<qint64>("v");
        QTest::addColumn<std::vector<i64>>("expected");
        QTest::newRow("32 over 4") << 32LL << 4LL << 1LL << std::vector<i64>{8, 8, 8, 8};
        QTest::newRow("30 over 4") << 30LL << 4LL << 1LL << std::vector<i64>{8, 8, 7, 7};
        // 6 chunks of 2, 2, 2, 2, 1, 1; stage i holds chunks i and i + 3.
        QTest::newRow("10 over 3 x 2") << 10LL << 3LL << 2LL << std::vector<i64>{4, 3, 3};
        QTest::newRow("530B: 105 over 35 x 3") << 105LL << 35LL << 3LL << std::vector<i64>(35, 3);
        QTest::newRow("one stage") << 7LL << 1LL << 1LL << std::vector<i64>{7};
    }

    void stageSplit()
    {
        QFETCH(qint64, layers);
        QFETCH(qint64, p);
        QFETCH(qint64, v);
        QFETCH(std::vector<i64>, expected);
        QCOMPARE(stageLayers(layers, p, v), expected);
    }

    void stageSplitIsEven()
    {
        // Brute force: every stage gets floor or ceil of L / p (v = 1), and with chunks no two
        // stages differ by more than v layers; nothing is lost.
        for (i64 layers = 1; layers <= 40; ++layers)
            for (i64 p = 1; p <= layers; ++p)
                for (i64 v = 1; p * v <= layers; ++v) {
                    const std::vector<i64> split = stageLayers(layers, p, v);
                    QCOMPARE(static_cast<i64>(split.size()), p);
                    i64 sum = 0, lo = layers, hi = 0;
                    for (const i64 n : split) {
                        sum += n;
                        lo = std::min(lo, n);
                        hi = std::max(hi, n);
                    }
                    QCOMPARE(sum, layers);
                    QVERIFY(hi - lo <= (v == 1 ? 1 : v));
                    if (v == 1)
                        QVERIFY(lo == layers / p && hi == (layers + p - 1) / p);
                }
    }

    void inFlightPerStage()
    {
        PlanInputs in;
        in.pipelineParallel = 4;
        in.gpus = 8 * 4 * 2; // d = 2
        in.globalBatch = 4; // m = 2: fewer microbatches than stages
        PlanResult r = computePlan(in);
        QCOMPARE(r.microbatches, i64(2));
        std::vector<i64> inFlight;
        for (const PlanStage& s : r.stages)
            inFlight.push_back(s.inFlight);
        QCOMPARE(inFlight, (std::vector<i64>{2, 2, 2, 1}));
        in.globalBatch = 16; // m = 8
        r = computePlan(in);
        inFlight.clear();
        for (const PlanStage& s : r.stages)
            inFlight.push_back(s.inFlight);
        QCOMPARE(inFlight, (std::vector<i64>{4, 3, 2, 1}));
        QCOMPARE(r.bubbleFraction, pipelineBubbleFraction(4, 8));
        QCOMPARE(r.bubbleFraction, 3.0 / 11.0);
    }

    void stageActivationsByHand()
    {
        // Middle stages hold layers x per-layer bytes x in-flight; the first adds the
        // embedding's dropout mask (s b h bytes / t with SP, per microbatch in flight), the
        // last the norm and output-layer inputs (4 s b h / t) and the fp32 logits (4 s b v / t).
        PlanInputs in;
        in.model.layers = 12;
        in.pipelineParallel = 3;
        in.gpus = 8 * 3 * 2;
        in.globalBatch = 8; // m = 4
        const PlanResult r = computePlan(in);
        const Ratio layer = layerActivationBytes(in);
        const i64 s = in.sequence, b = in.microBatch, h = in.model.hidden, v = in.model.vocab;
        const i64 t = in.tensorParallel;
        QCOMPARE(r.stages[1].activationBytes, times(layer, frac(4 * 2)));
        QCOMPARE(r.stages[0].activationBytes,
                 plus(times(layer, frac(4 * 3)), frac(s * b * h * 3, t)));
        QCOMPARE(r.stages[2].activationBytes,
                 plus(times(layer, frac(4 * 1)), frac(4 * s * b * h + 4 * s * b * v, t)));
        QCOMPARE(r.peakStage, i64(0));
        QCOMPARE(r.peakBytesPerGpu, r.stages[0].totalBytes);
    }

    void interleavedFactor()
    {
        // 48 layers, p = 4, m = 8 >= p: with v = 3 the first stage still holds 12 layers, and
        // its layer activations grow by 1 + (p-1)/(p v) = 1 + 3/12 (Korthikanti et al. 4.2.3).
        PlanInputs in;
        in.model.layers = 48;
        in.pipelineParallel = 4;
        in.gpus = 8 * 4 * 2;
        in.globalBatch = 16;
        const PlanResult flat = computePlan(in);
        in.virtualStages = 3;
        const PlanResult inter = computePlan(in);
        const Ratio layerPart = times(layerActivationBytes(in), frac(12 * 4)); // 12 layers x 4
        QCOMPARE(inter.stages[0].layers, i64(12));
        QCOMPARE(inter.stages[0].activationBytes,
                 plus(flat.stages[0].activationBytes, times(layerPart, frac(3, 12))));
        // The same factor on a middle stage (no embedding or output terms there).
        QCOMPARE(inter.stages[1].activationBytes,
                 times(flat.stages[1].activationBytes, frac(15, 12)));
        // Closed-form bubbles: (p-1)/(m+p-1) and (p-1)/(v m+p-1).
        QCOMPARE(flat.bubbleFraction, 3.0 / 11.0);
        QCOMPARE(inter.bubbleFraction, 3.0 / 27.0);
    }

    void zeroAgreesWithZeroSection_data()
    {
        QTest::addColumn<qint64>("zeroStage");
        QTest::addColumn<qint64>("p");
        QTest::addColumn<bool>("moe");
        for (const i64 stage : {0, 1, 2, 3})
            for (const i64 p : {1, 4}) {
                QTest::addRow("ZeRO-%lld, p %lld, dense", static_cast<long long>(stage),
                              static_cast<long long>(p))
                    << qint64(stage) << qint64(p) << false;
                QTest::addRow("ZeRO-%lld, p %lld, MoE ep 4", static_cast<long long>(stage),
                              static_cast<long long>(p))
                    << qint64(stage) << qint64(p) << true;
            }
    }

    void zeroAgreesWithZeroSection()
    {
        QFETCH(qint64, zeroStage);
        QFETCH(qint64, p);
        QFETCH(bool, moe);
        PlanInputs in;
        if (moe) {
            in.model = mixtral8x7b();
            in.expertParallel = 4;
        }
        in.zeroStage = zeroStage;
        in.pipelineParallel = p;
        in.gpus = 8 * p * 8; // d = 8
        in.globalBatch = 64;
        in.optimizerBytes = 13; // so that 13 P / 8 is not always whole
        const PlanResult r = computePlan(in);
        const i64 d = r.dataParallel;
        QCOMPARE(d, i64(8));
        for (const PlanStage& st : r.stages) {
            // The zero section's figure for the same P and n: routed experts live on d / ep
            // ranks, everything else on d.
            const auto zero = [&](i64 params, i64 ranks) {
                return zeroFigure(
                    computeZero({params, ranks, in.weightBytes, in.gradBytes, in.optimizerBytes}),
                    zeroStage);
            };
            Ratio expected = zero(st.parameters - st.expertParameters, d);
            if (st.expertParameters > 0) // the zero section refuses P = 0
                expected = plus(expected, zero(st.expertParameters, d / in.expertParallel));
            QCOMPARE(st.modelStateBytes, expected);
            QCOMPARE(plus(plus(st.weightBytes, st.gradBytes), st.optimizerBytes),
                     st.modelStateBytes);
            QCOMPARE(st.totalBytes, plus(st.modelStateBytes, st.activationBytes));
            if (!moe)
                QCOMPARE(st.expertParameters, i64(0));
        }
        // Data-parallel traffic: the zero section's ring figures for the same P and n.
        if (!moe) {
            const PlanStage& st = r.stages[0];
            const ZeroTraffic tr = zeroTraffic(
                {st.parameters, d, in.weightBytes, in.gradBytes, in.optimizerBytes}, LinkModel{});
            // Plain DP and ZeRO-1 communicate once a step. ZeRO-2 has no whole gradient to
            // accumulate the m microbatches in: m reduce-scatters of P g, then one all-gather
            // of P w. ZeRO-3 repeats its whole exchange for every microbatch.
            const i64 m = r.microbatches;
            QCOMPARE(m, i64(8)); // 64 sequences over d = 8, one each
            const Ratio gradients = frac((d - 1) * st.parameters * in.gradBytes, d);
            const Ratio weights = frac((d - 1) * st.parameters * in.weightBytes, d);
            QCOMPARE(plus(gradients, weights), tr.zero12.bytes);
            const Ratio expected = zeroStage == 0 ? tr.dp.bytes
                : zeroStage == 1                  ? tr.zero12.bytes
                : zeroStage == 2                  ? plus(times(gradients, frac(m, 1)), weights)
                                                  : times(tr.zero3.bytes, frac(m, 1));
            QCOMPARE(st.communication.dataParallel, expected);
        }
    }

    void stageParametersByHand()
    {
        // One stage, dense: every matrix split t ways, the norms whole on each rank.
        PlanInputs in; // Llama-3-8B-shaped defaults, t = 8
        const ParameterCount c = countParameters(in.model);
        const PlanResult r = computePlan(in);
        const i64 t = in.tensorParallel;
        QCOMPARE(r.stages[0].parameters,
                 (c.attention + c.denseMlp + c.embedding + c.outputLayer) / t + c.norms);
        // Two stages, tied embeddings: the last stage keeps its own copy of the output layer.
        in.model.tiedEmbeddings = true;
        in.pipelineParallel = 2;
        in.gpus = 128;
        const PlanResult two = computePlan(in);
        const i64 h = in.model.hidden;
        const i64 perLayer = (c.attention + c.denseMlp) / in.model.layers / t + 2 * h;
        QCOMPARE(two.stages[0].parameters, 16 * perLayer + c.embedding / t);
        QCOMPARE(two.stages[1].parameters, 16 * perLayer + h + c.embedding / t);
    }

    void zeroTwoAndThreeSendPerMicrobatch()
    {
        // With w = g and one microbatch a step: ZeRO-2 sends P g + P w, what plain DP's
        // all-reduce sends (2 P g); ZeRO-3 gathers the weights twice and reduce-scatters the
        // gradients, 1.5 times that.
        PlanInputs in;
        QCOMPARE(in.weightBytes, in.gradBytes);
        in.globalBatch = computePlan(in).dataParallel; // one sequence per rank: m = 1
        const auto dataParallel = [&](i64 zeroStage) {
            in.zeroStage = zeroStage;
            const PlanResult r = computePlan(in);
            return std::make_pair(r.microbatches, r.communication.dataParallel);
        };
        const auto [m1, dp] = dataParallel(0);
        QCOMPARE(m1, i64(1));
        QCOMPARE(dataParallel(1).second, dp);
        QCOMPARE(dataParallel(2).second, dp);
        QCOMPARE(dataParallel(3).second, times(dp, frac(3, 2)));
        // Eight microbatches: plain DP and ZeRO-1 still send once; ZeRO-2 sends 8 P g + P w,
        // 9/2 of the all-reduce; ZeRO-3 sends its whole exchange 8 times, 12 all-reduces.
        in.globalBatch *= 8;
        QCOMPARE(dataParallel(0), std::make_pair(i64(8), dp));
        QCOMPARE(dataParallel(1).second, dp);
        QCOMPARE(dataParallel(2).second, times(dp, frac(9, 2)));
        QCOMPARE(dataParallel(3).second, times(dp, frac(12, 1)));
    }

    // ---- Communication by axis, worked by hand ---------------------------------------------

    void communicationByHand()
    {
        // L 4, h 8, a 4, plain MLP 32, vocab 16, 4 experts top 2; s 4, b 1; t 2, p 2, d 2,
        // ep 2; global batch 4, so m = 2. Sequence parallel, selective recompute.
        PlanInputs in;
        in.model.layers = 4;
        in.model.hidden = 8;
        in.model.heads = 4;
        in.model.ffnHidden = 32;
        in.model.gatedMlp = false;
        in.model.vocab = 16;
        in.model.experts = 4;
        in.model.topK = 2;
        in.sequence = 4;
        in.microBatch = 1;
        in.tensorParallel = 2;
        in.pipelineParallel = 2;
        in.gpus = 8;
        in.expertParallel = 2;
        in.globalBatch = 4;
        const PlanResult r = computePlan(in);
        QCOMPARE(r.microbatches, i64(2));
        const i64 tensor = 2 * 4 * 1 * 8; // 2sbh bytes of activations: 64
        const i64 slotBytes = 2 * 2 * 8 * 2; // s b / t = 2 tokens x top 2 x 8 values x 2 bytes
        for (const PlanStage& st : r.stages) {
            QCOMPARE(st.layers, i64(2));
            // TP: 2 layers x 2 microbatches x 4 collectives x 2(t-1)/t (= 1) x 64 = 1024.
            QCOMPARE(st.communication.tensorParallel, frac(2 * 2 * 4 * tensor));
            // PP: one send per microbatch (first stage forward, last backward) of 64 / t.
            QCOMPARE(st.communication.pipeline, frac(2 * tensor / 2));
            // EP: 2 MoE layers x 2 microbatches x 4 all-to-alls x slotBytes x (ep-1)/ep = 1/2.
            QCOMPARE(st.communication.expert, frac(2 * 2 * 4 * slotBytes / 2));
        }
        QCOMPARE(r.communication.tensorParallel, frac(1024));
        // Full recomputation replays the forward's 2 all-reduces and 2 all-to-alls.
        in.recompute = Recompute::Full;
        const PlanResult full = computePlan(in);
        QCOMPARE(full.communication.tensorParallel, frac(2 * 2 * 6 * tensor));
        QCOMPARE(full.communication.expert, frac(2 * 2 * 6 * slotBytes / 2));
        // Interleaving (v = 2): each stage sends from both chunks, less the model's last
        // chunk forward and its first backward: 2 + 1 sends per microbatch on either stage.
        in.recompute = Recompute::Selective;
        in.virtualStages = 2;
        const PlanResult inter = computePlan(in);
        for (const PlanStage& st : inter.stages)
            QCOMPARE(st.communication.pipeline, frac(3 * 2 * tensor / 2));
        // Without sequence parallelism each GPU sends the whole activation tensor, and all of
        // its tokens to the experts.
        in.virtualStages = 1;
        in.sequenceParallel = false;
        QCOMPARE(computePlan(in).communication.pipeline, frac(2 * tensor));
        QCOMPARE(computePlan(in).communication.tensorParallel, frac(1024));
        QCOMPARE(computePlan(in).communication.expert, frac(2 * 2 * 4 * (2 * slotBytes) / 2));
        // tensor_parallel 1 sends nothing on that axis.
        in.tensorParallel = 1;
        in.gpus = 4;
        QCOMPARE(computePlan(in).communication.tensorParallel, frac(0));
    }

    // ---- Defaults and published configurations ----------------------------------------------

    void defaultsAreSensible()
    {
        // The defaults are a Llama-3-8B-like model (kv_heads defaults to heads, so 8.8B
        // instead of 8.0B) on 64 GPUs: t 8, p 1, so d 8 and m = 512 / 8 = 64. One stage, no
        // bubble, nothing sent on the pipeline or expert axes. ZeRO-1 over 8 ranks keeps
        // 2 + 2 + 12/8 = 5.5 bytes per weight on the GPU, about 6 GB for its 1.1B weights;
        // selective recompute with SP keeps about 2.9 GB of activations (mostly the MLP and the
        // fp32 logits of a 128k vocabulary): about 9 GB in all, well inside 80 GiB.
        const PlanInputs in;
        QVERIFY(!in.model.kvHeads.has_value());
        const PlanResult r = computePlan(in);
        QCOMPARE(r.dataParallel, i64(8));
        QCOMPARE(r.microbatches, i64(64));
        QCOMPARE(r.stages.size(), std::size_t(1));
        QCOMPARE(r.stages[0].layers, i64(32));
        QCOMPARE(r.stages[0].inFlight, i64(1));
        QCOMPARE(r.bubbleFraction, 0.0);
        // 32 layers of 4h^2 attention and 3 h ffn MLP, 65 norms, two vocab x h matrices.
        QCOMPARE(r.parameters.total,
                 32 * 4 * i64(4096) * 4096 + 32 * 3 * i64(4096) * 14336 + 65 * 4096
                     + 2 * i64(128256) * 4096);
        const i64 p = r.stages[0].parameters;
        QCOMPARE(r.stages[0].modelStateBytes, frac(11 * p, 2));
        // Activations: 32 layers of (10h + 8h + 6 ffn) s b / t, the embedding mask s b h / t,
        // the last stage's 4 s b h / t and 4 s b v / t.
        const i64 s = 4096, h = 4096, ffn = 14336, v = 128256, t = 8;
        const Ratio layer = frac(s * (18 * h + 6 * ffn), t);
        QCOMPARE(layerActivationBytes(in), layer);
        QCOMPARE(r.stages[0].activationBytes,
                 plus(times(layer, frac(32)), frac(s * h + 4 * s * h + 4 * s * v, t)));
        QVERIFY(gib(r.peakBytesPerGpu) > 5 && gib(r.peakBytesPerGpu) < 12);
        QVERIFY(r.fits);
        QCOMPARE(r.communication.pipeline, frac(0));
        QCOMPARE(r.communication.expert, frac(0));
        // TP: 32 layers x 64 microbatches x 4 ring all-reduces of 2 s b h bytes over 8 ranks.
        QCOMPARE(r.communication.tensorParallel, frac(32 * 64 * 4 * 2 * 7 * (2 * s * h), 8));
        // DP (ZeRO-1): reduce-scatter of gradients plus all-gather of weights, 7/8 x 4 P.
        QCOMPARE(r.communication.dataParallel, frac(7 * 4 * p, 8));
        QVERIFY(std::isfinite(r.peakBytesPerGpu.value()));
    }

    void fitsAtTheLine()
    {
        PlanInputs in;
        const Ratio peak = computePlan(in).peakBytesPerGpu;
        QVERIFY(peak.isWhole() && peak.numerator < (i64(1) << 53));
        in.gpuMemoryGib = peak.value() / double(1LL << 30); // exact: a power-of-two scale
        QVERIFY(computePlan(in).fits);
        in.gpuMemoryGib = std::nextafter(in.gpuMemoryGib, 0.0);
        QVERIFY(!computePlan(in).fits);
    }

    void refusedLayouts_data()
    {
        QTest::addColumn<int>("row");
        for (std::size_t i = 0; i < refusals().size(); ++i)
            QTest::newRow(refusals()[i].name) << static_cast<int>(i);
    }

    void refusedLayouts()
    {
        QFETCH(int, row);
        const Refusal& r = refusals()[static_cast<std::size_t>(row)];
        PlanInputs in;
        validate(in); // the defaults pass; only the change below breaks them
        r.change(in);
        SCALELAB_VERIFY_INPUT_ERROR(validate(in), r.field);
        SCALELAB_VERIFY_INPUT_ERROR(computePlan(in), r.field);
    }

    void refusalsSayWhy()
    {
        PlanInputs in;
        in.gpus = 48; // d = 6, and 512 is not a multiple of 1 x 6
        std::string message;
        QVERIFY(
            scalelab::test::throwsInputError([&] { validate(in); }, "plan.global_batch", &message));
        QVERIFY2(
            message.find("a multiple of micro_batch x data-parallel size = 1 x 6 (data-parallel "
                         "size = gpus / (tensor_parallel x pipeline_parallel) = 48 / (8 x "
                         "1)); 512 is not")
                != std::string::npos,
            message.c_str());
        in = PlanInputs{};
        in.model.kvHeads = 5;
        QVERIFY(scalelab::test::throwsInputError([&] { validate(in); }, "plan.model.kv_heads",
                                                 &message));
        QVERIFY2(message.find("heads 32 is not a multiple of kv_heads 5") != std::string::npos,
                 message.c_str());
    }

    void table3Configurations_data()
    {
        // Korthikanti et al. 2022, Table 3: GPT models with s = 2048 and v = 51200, no data
        // parallelism (gpus = t p), plain 4h MLP, tied embeddings.
        QTest::addColumn<qint64>("heads");
        QTest::addColumn<qint64>("hidden");
        QTest::addColumn<qint64>("layers");
        QTest::addColumn<qint64>("t");
        QTest::addColumn<qint64>("p");
        QTest::addColumn<qint64>("globalBatch");
        QTest::addColumn<qint64>("microBatch");
        QTest::addColumn<qint64>("v");
        QTest::newRow("22B") << 64LL << 6144LL << 48LL << 8LL << 1LL << 4LL << 4LL << 1LL;
        QTest::newRow("175B") << 96LL << 12288LL << 96LL << 8LL << 8LL << 64LL << 1LL << 1LL;
        QTest::newRow("175B, v 3") << 96LL << 12288LL << 96LL << 8LL << 8LL << 64LL << 1LL << 3LL;
        QTest::newRow("530B") << 128LL << 20480LL << 105LL << 8LL << 35LL << 280LL << 1LL << 1LL;
        QTest::newRow("530B, v 3")
            << 128LL << 20480LL << 105LL << 8LL << 35LL << 280LL << 1LL << 3LL;
        QTest::newRow("1T") << 160LL << 25600LL << 128LL << 8LL << 64LL << 512LL << 1LL << 1LL;
    }

    void table3Configurations()
    {
        QFETCH(qint64, heads);
        QFETCH(qint64, hidden);
        QFETCH(qint64, layers);
        QFETCH(qint64, t);
        QFETCH(qint64, p);
        QFETCH(qint64, globalBatch);
        QFETCH(qint64, microBatch);
        QFETCH(qint64, v);
        PlanInputs in = scalelab::test::korthikantiShape(layers, hidden, heads, t, p, v,
                                                         globalBatch, microBatch);
        in.gpus = t * p;
        const PlanResult r = computePlan(in);
        QCOMPARE(r.dataParallel, i64(1));
        QVERIFY(std::isfinite(r.peakBytesPerGpu.value()));
        const std::vector<VariantActivations> variants = activationVariants(in);
        QCOMPARE(variants.size(), std::size_t(6));
        QString line = QString("%1 params %2B, first stage %3 layers, m %4:")
                           .arg(QTest::currentDataTag())
                           .arg(static_cast<double>(r.parameters.total) / 1e9, 0, 'f', 1)
                           .arg(r.stages[0].layers)
                           .arg(r.microbatches);
        for (const VariantActivations& va : variants) {
            // The first stage is the busiest: p microbatches in flight (here m >= p).
            QCOMPARE(va.peakBytes, va.stageBytes[0]);
            line += QString(" | %1: %2 GiB (%3%)")
                        .arg(QString::fromStdString(activationVariantName(va.variant)))
                        .arg(gib(va.peakBytes), 0, 'f', 2)
                        .arg(100.0 * gib(va.peakBytes) / 80.0, 0, 'f', 1);
        }
        line += QString(" | model state %1 GiB").arg(gib(r.stages[0].modelStateBytes), 0, 'f', 2);
        qInfo("%s", qPrintable(line));
        // Equation (6) of the paper: with SP and selective recompute the first stage holds
        // 34 s b h L / t, plus section 4.3's terms, times the interleaving factor when v > 1.
        const VariantActivations& both = variants[4];
        QCOMPARE(both.variant, ActivationVariant::TensorSequenceSelective);
        const i64 sbh = 2048 * microBatch * hidden;
        const Ratio interleave = v > 1 ? frac(p * v + p - 1, p * v) : frac(1);
        Ratio expected = times(frac(34 * sbh * layers, t), interleave);
        expected = plus(expected, frac(sbh * p, t)); // embedding dropout mask, p microbatches
        if (p == 1)
            expected = plus(expected, frac(4 * sbh + 4 * 2048 * microBatch * 51200, t));
        QCOMPARE(both.stageBytes[0], expected);
    }
};

QTEST_GUILESS_MAIN(TstPlan)
#include "tst_plan.moc"
