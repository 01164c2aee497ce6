// Step time of a plan: three small layouts whose every term is derived by hand below, the
// FLOP count against Korthikanti et al.'s closed form, the link each group uses, the refused
// hardware inputs, and the calibration against published end-to-end runs (docs/STEPTIME.md).

#include "calibrationruns.h"
#include "scalelab/core/collectives.h"
#include "scalelab/core/plan.h"
#include "scalelab/core/steptime.h"
#include "testhelpers.h"

#include <QTest>
#include <cmath>
#include <cstdint>

using namespace scalelab::core;
using scalelab::test::korthikanti;
using scalelab::test::llama405b;
using scalelab::test::narayanan;

Q_DECLARE_METATYPE(scalelab::core::PlanInputs)

namespace {

/// Equal to 12 significant digits: the model's sums run in another order than the test's.
bool close(double got, double want)
{
    return std::fabs(got - want) <= 1e-12 * std::max(1.0, std::fabs(want));
}

#define QCLOSE(got, want)                                                                          \
    do {                                                                                           \
        const double g_ = (got);                                                                   \
        const double w_ = (want);                                                                  \
        if (!close(g_, w_))                                                                        \
            QFAIL(qPrintable(QString("%1 = %2, expected %3")                                       \
                                 .arg(#got)                                                        \
                                 .arg(g_, 0, 'g', 17)                                              \
                                 .arg(w_, 0, 'g', 17)));                                           \
    } while (false)

/// A GPT-shaped toy: 4h MLP without gate, as many key/value heads as query heads, h = 1024,
/// 16 heads, s = 1024, vocab 1000, tied embeddings, A100 80GB (312e12 FLOP/s BF16).
PlanInputs toy(std::int64_t layers)
{
    PlanInputs in;
    in.model.layers = layers;
    in.model.hidden = 1024;
    in.model.heads = 16;
    in.model.ffnHidden = 4096;
    in.model.vocab = 1000;
    in.model.gatedMlp = false;
    in.model.tiedEmbeddings = true;
    in.sequence = 1024;
    in.microBatch = 1;
    in.globalBatch = 1;
    in.gpus = 1;
    in.tensorParallel = 1;
    in.pipelineParallel = 1;
    in.sequenceParallel = false;
    in.recompute = Recompute::None;
    in.zeroStage = 0;
    in.hardware.gpu = GpuType::A100_80GB;
    return in;
}

} // namespace

class TstStepTime : public QObject {
    Q_OBJECT

private slots:
    void presets()
    {
        QCOMPARE(gpuSpec(GpuType::A100_80GB).bf16Flops, 312e12);
        QCOMPARE(gpuSpec(GpuType::A100_40GB).fp8Flops, 0.0);
        QCOMPARE(gpuSpec(GpuType::H100_80GB).bf16Flops, 989e12);
        QCOMPARE(gpuSpec(GpuType::H100_80GB).fp8Flops, 1979e12);
        QCOMPARE(gpuSpec(GpuType::H200_141GB).memoryGB, 141.0);
        QCOMPARE(QString(gpuTypeName(GpuType::H200_141GB)), QString("h200_141gb"));
        // The curve: half the plateau at the half size, rising with the size.
        QCLOSE(gemmEfficiency(kGemmHalfSize), kGemmEfficiencyMax / 2);
        QVERIFY(gemmEfficiency(512) < gemmEfficiency(2048));
        // The size: h n / (h + n) for n = ffn / t. A 4h MLP gives 4h/5 on one GPU and h/3 on
        // eight; h = 6144 at t = 8 is 2048, the size of 4096 at t = 4 (Narayanan et al.'s
        // 18.4B and 7.5B runs, which reach about the same fraction of peak).
        QCLOSE(gemmSize(1024, 4096, 1), 819.2);
        QCLOSE(gemmSize(6144, 24576, 8), 2048);
        QCLOSE(gemmSize(4096, 16384, 4), 2048);
        QCLOSE(gemmSize(16384, 53248, 8), 16384.0 * 6656 / 23040);
    }

    void flopsMatchKorthikanti()
    {
        // For Table 2's shape a layer's forward is 24 h^2 + 4 s h per token, the logits 2 h V:
        // 3 x (L (24 h^2 + 4 s h) + 2 h V) = 72 L h^2 (1 + s/(6h)) + 6 h V per token. The
        // paper's 72 B s l h^2 (1 + s/(6h) + V/(16 l h)) has 4.5 h V for the logits (it scales
        // the 96 of full recomputation by 3/4, logits included); the difference is under 0.1%.
        const PlanInputs in = korthikanti(96, 12288, 96, 64, 8, 3, 64, 1);
        const double l = 96, h = 12288, s = 2048, V = 51200;
        const TokenFlops f = tokenFlops(in);
        QCLOSE(f.denseLayer, 24 * h * h + 4 * s * h);
        QCLOSE(f.logits, 2 * h * V);
        const double paper = 72 * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
        QVERIFY(std::fabs(3 * f.model / paper - 1) < 1e-3);
        // Grouped-query attention: k and v shrink by kv/a; a gated MLP has 3 matrices.
        PlanInputs gqa = in;
        gqa.model.kvHeads = 8;
        gqa.model.gatedMlp = true;
        const double kv = h * 8 / 96;
        QCLOSE(tokenFlops(gqa).denseLayer,
               2 * (2 * h * h + 2 * h * kv) + 4 * s * h + 2 * 3 * h * 4 * h);
    }

    void groupLinksFollowRankOrder()
    {
        // 64 GPUs, t = 8, p = 2, d = 4, ep = 2, nodes of 8: TP fills a node; data parallel
        // spans t d = 32 ranks, experts t ep = 16, the pipeline all 64: all three cross nodes.
        PlanInputs in;
        in.pipelineParallel = 2;
        in.expertParallel = 2;
        GroupLinks links = groupLinks(in);
        QVERIFY(!links.tensorInterNode);
        QVERIFY(links.dataInterNode && links.expertInterNode && links.pipelineInterNode);
        // Nodes of 64: everything stays on NVLink.
        in.hardware.gpusPerNode = 64;
        links = groupLinks(in);
        QVERIFY(!links.dataInterNode && !links.expertInterNode && !links.pipelineInterNode);
    }

    void oneGpu()
    {
        // Layout 1: one GPU, two layers, no recomputation. Per token (h = 1024, s = 1024):
        // projections 8 h^2 = 8388608, scores 4 s h = 4194304, MLP 16 h^2 = 16777216: a layer
        // is 29360128 FLOPs; the logits 2 h V = 2048000; the model 2 x 29360128 + 2048000 =
        // 60768256. One microbatch of 1024 tokens runs at 312e12 x e(x) FLOP/s, where the GEMM
        // size x is h n / (h + n) = 1024 x 4096 / 5120 = 819.2 and e(x) = 0.76 x / (x + 1270).
        // Forward = 60768256 x 1024 / rate, backward twice that; no communication, no bubble.
        // So the step is 3 forwards, and MFU = 3 x 60768256 x 1024 / (step x 312e12) = e(x)
        // exactly: with nothing but compute, MFU is the GEMM efficiency.
        const PlanInputs in = toy(2);
        const StepTime st = computeStepTime(in);
        const double e = 0.76 * 819.2 / (819.2 + 1270);
        const double rate = 312e12 * e;
        const double forward = 60768256.0 * 1024 / rate;
        QCLOSE(st.gemmEfficiency, e);
        QCLOSE(st.forward, forward);
        QCLOSE(st.backward, 2 * forward);
        QCOMPARE(st.recompute, 0.0);
        QCOMPARE(st.tensorParallel + st.expert + st.bubble + st.pipelineSends, 0.0);
        QCOMPARE(st.dataParallel, 0.0);
        QCLOSE(st.total, 3 * forward);
        QCLOSE(st.mfu, e);
        QCLOSE(st.hfu, e);
        QCLOSE(st.tokensPerSecond, 1024 / st.total);
        QCLOSE(st.tflopsPerGpu, 3 * 60768256.0 * 1024 / st.total / 1e12);
        QCLOSE(st.trainingDays, 1e12 / st.tokensPerSecond / 86400);
    }

    void tensorAndPipeline()
    {
        // Layout 2: 4 GPUs, t = 2, p = 2 (d = 1), 4 layers, 4 microbatches of one sequence,
        // sequence parallelism, selective recomputation; nodes of 2 GPUs, so the TP pair is on
        // NVLink (450 GB/s, 2 us) and the pipeline crosses nodes (50 GB/s, 10 us).
        PlanInputs in = toy(4);
        in.gpus = 4;
        in.tensorParallel = 2;
        in.pipelineParallel = 2;
        in.globalBatch = 4;
        in.sequenceParallel = true;
        in.recompute = Recompute::Selective;
        in.hardware.gpusPerNode = 2;
        const StepTime st = computeStepTime(in);
        // Each stage has 2 layers; the last also the logits, so it is the critical one. Its
        // GPU runs 4 x 1024 tokens through half of each matrix (t = 2) at 312e12 x e(x), the
        // GEMM size x = 1024 x 2048 / (1024 + 2048) = 2048/3 (n = 4096 / 2).
        QCOMPARE(st.criticalStage, std::int64_t(1));
        const double x = 2048.0 / 3;
        const double e = 0.76 * x / (x + 1270);
        const double rate = 312e12 * e;
        const double tokens = 4 * 1024;
        const double forward = tokens * (2 * 29360128.0 + 2048000) / 2 / rate;
        QCLOSE(st.forward, forward);
        QCLOSE(st.backward, 2 * forward);
        // Selective: the scores again, 4 s h = 4194304 per token and layer.
        QCLOSE(st.recompute, tokens * 2 * 4194304.0 / 2 / rate);
        // TP: 4 collectives per layer and microbatch (all-gather + reduce-scatter pairs with
        // SP: the bytes of an all-reduce) of the 2 s b h = 2 MiB tensor. A ring all-reduce over
        // 2 ranks is 2 (2-1) messages of half the tensor: 2 (2e-6 + 1 MiB / 450e9).
        const double tensor = 2 * 1024.0 * 1024;
        const double oneAllReduce = 2 * (2e-6 + tensor / 2 / 450e9);
        QCLOSE(st.tensorParallel, 4 * 2 * 4 * oneAllReduce);
        // Bubble: (p-1)/(v m) = 1/4 of the busy time.
        QCLOSE(st.bubble, (st.forward + st.backward + st.recompute + st.tensorParallel) / 4);
        // Sends: the last stage returns each microbatch's gradient once, split by SP (1 MiB)
        // over InfiniBand: 4 x (10e-6 + 1 MiB / 50e9).
        QCLOSE(st.pipelineSends, 4 * (10e-6 + tensor / 2 / 50e9));
        QCOMPARE(st.dataParallel, 0.0);
        QCLOSE(st.total,
               st.forward + st.backward + st.recompute + st.tensorParallel + st.bubble
                   + st.pipelineSends);
        // HFU counts the scores twice: (3 x model + 4 layers x 4194304) per token.
        QCLOSE(st.hfu / st.mfu,
               (3 * (4 * 29360128.0 + 2048000) + 4 * 4194304.0) / (3 * (4 * 29360128.0 + 2048000)));
    }

    void fewerMicrobatchesThanStages()
    {
        // 4 stages of 2 chunks (8 layers, v = 2) and only m = 2 microbatches: the pipeline
        // never fills. A forward wave through the 8 chunks lasts m - 1 + p v = 9 slots of half
        // a microbatch's forward, the backward wave likewise: 4.5 units of one microbatch's
        // work, of which 2 are busy. The bubble is 2.5 / 2 of the busy time, not the
        // (p-1)/(v m) = 3/4 that interleaving would give a full pipeline.
        PlanInputs in = toy(8);
        in.gpus = 4;
        in.pipelineParallel = 4;
        in.virtualStages = 2;
        in.globalBatch = 2;
        const StepTime st = computeStepTime(in);
        const double busy = st.forward + st.backward + st.recompute + st.tensorParallel + st.expert;
        QCLOSE(st.bubble, 1.25 * busy);
        // The plan's idle share is the same bubble over the whole step: 2.5 / 4.5.
        QCLOSE(computePlan(in).bubbleFraction, 2.5 / 4.5);
        // With m = p = 4 microbatches the closed form holds: 3/8 of the busy time.
        in.globalBatch = 4;
        const StepTime full = computeStepTime(in);
        QCLOSE(full.bubble,
               3.0 / 8 * (full.forward + full.backward + full.recompute + full.tensorParallel));
    }

    void dataParallelAndExperts();
    void zeroStagesPerMicrobatch();
    void refusedHardware();
    void calibrationKorthikanti_data();
    void calibrationKorthikanti();
    void calibrationLlama3_data();
    void calibrationLlama3();
    void calibrationNarayanan_data();
    void calibrationNarayanan();
};

void TstStepTime::dataParallelAndExperts()
{
    // Layout 3: 4 GPUs of data parallelism (t = p = 1, d = 4), ZeRO-1, one MoE layer of 4
    // experts (top 2, SwiGLU of width 4096) spread over ep = 2; nodes of 2 GPUs, so the
    // expert pair is on NVLink and the data-parallel ring crosses nodes (t d = 4 > 2), over
    // InfiniBand of 25 GB/s.
    PlanInputs in = toy(1);
    in.gpus = 4;
    in.globalBatch = 4;
    in.expertParallel = 2;
    in.zeroStage = 1;
    in.model.gatedMlp = true;
    in.model.tiedEmbeddings = false;
    in.model.experts = 4;
    in.model.topK = 2;
    in.hardware.gpusPerNode = 2;
    in.hardware.ibBandwidthGBs = 25;
    const StepTime st = computeStepTime(in);
    // Compute: one microbatch (m = 4 / (1 x 4)). An MoE layer per token: projections
    // 8388608, scores 4194304, router 2 h E = 8192, 2 experts x 2 x 3 h 4096 = 50331648:
    // 62922752; logits 2048000.
    const double h = 1024;
    const double rate = 312e12 * 0.76 * 819.2 / (819.2 + 1270); // GEMM size 819.2, as layout 1
    const double forward = 1024 * (62922752.0 + 2048000) / rate;
    QCLOSE(st.forward, forward);
    // Experts: 4 all-to-alls, each sending 1024 tokens x 2 copies x 2h bytes, half of them
    // to the other GPU: 4 MiB, in ep - 1 = 1 message: 4 x (2e-6 + 4 MiB / 450e9).
    QCLOSE(st.expert, 4 * (2e-6 + 1024 * 2 * 2 * h / 2 / 450e9));
    // Data parallel: weights each GPU holds beside its experts: attention 4 h^2 + 2 norms
    // 2h, router h E, embedding and output 2 V h, final norm h: 4 h^2 + 7 h + 2000 h. Its
    // 2 experts (of 4, over ep = 2) are 2 x 3 h 4096. ZeRO-1 reduce-scatters the gradients
    // and all-gathers the weights: (n-1)/n P (g + w) bytes in 2 (n-1) messages, over d = 4
    // for the first part and d / ep = 2 for the experts, on InfiniBand (25 GB/s, 10 us).
    const double shared = 4 * h * h + 7 * h + 2000 * h;
    const double experts = 2 * 3 * h * 4096;
    const double dp =
        (6 * 10e-6 + 0.75 * shared * 4 / 25e9) + (2 * 10e-6 + 0.5 * experts * 4 / 25e9);
    QCLOSE(st.dataParallel, dp);
    // About 2.8 ms of it; the backward is 2 forwards, about 1.43 ms, shorter than the 0.8 x
    // 2.8 ms that could overlap: the whole backward hides data-parallel time, the rest shows.
    QCLOSE(st.backward, 2 * forward);
    QVERIFY(st.backward < 0.8 * dp);
    QCLOSE(st.dataParallelExposed, dp - st.backward);
    QCLOSE(st.total, 3 * forward + st.expert + st.dataParallelExposed);
}

void TstStepTime::zeroStagesPerMicrobatch()
{
    // One dense layer on 4 GPUs of data parallelism (t = p = 1, d = 4), 12 sequences a step:
    // m = 12 / 4 = 3 microbatches per rank. Nodes of 2 GPUs: the ring crosses nodes, so it
    // runs on InfiniBand (50 GB/s, 10 us). Each GPU holds the whole layer: attention 4 h^2,
    // MLP 2 h 4096, two norms 2h, the tied embedding 1000 h and the final norm h.
    PlanInputs in = toy(1);
    in.gpus = 4;
    in.globalBatch = 12;
    in.hardware.gpusPerNode = 2;
    QCOMPARE(in.weightBytes, std::int64_t(2));
    QCOMPARE(in.gradBytes, std::int64_t(2));
    const double h = 1024;
    const double P = 4 * h * h + 2 * h * 4096 + 2 * h + 1000 * h + h;
    const double alpha = 10e-6, B = 50e9, share = 0.75 * P; // (n - 1)/n of the weights
    const auto dp = [&](std::int64_t zeroStage) {
        in.zeroStage = zeroStage;
        return computeStepTime(in);
    };
    // Plain DP: the gradients accumulate over the 3 microbatches, one all-reduce a step.
    QCLOSE(dp(0).dataParallel, 2 * 3 * alpha + 2 * share * 2 / B);
    // ZeRO-1: still whole gradients to add up in: one reduce-scatter of P g and one
    // all-gather of P w.
    QCLOSE(dp(1).dataParallel, 2 * 3 * alpha + share * (2 + 2) / B);
    // ZeRO-2 keeps a quarter of the gradients, so every microbatch's are reduce-scattered as
    // its backward makes them (3 of them), then the weights all-gathered once: 4 collectives.
    QCLOSE(dp(2).dataParallel, 4 * 3 * alpha + share * (3 * 2 + 2) / B);
    // ZeRO-3 keeps a quarter of the weights too: per microbatch it gathers them for forward
    // and for backward and reduce-scatters the gradients: 9 collectives.
    const StepTime three = dp(3);
    QCLOSE(three.dataParallel, 3 * 3 * 3 * alpha + 3 * share * (2 * 2 + 2) / B);
    // The backward hides at most 0.8 of it, and never more than its own length.
    QCLOSE(three.dataParallelExposed,
           three.dataParallel - std::min(0.8 * three.dataParallel, three.backward));
    // With one microbatch a step ZeRO-2 sends what ZeRO-1 does, and ZeRO-3 a third as much.
    in.globalBatch = 4;
    QCLOSE(dp(2).dataParallel, dp(1).dataParallel);
    QCLOSE(dp(3).dataParallel, 3 * 3 * alpha + share * (2 * 2 + 2) / B);
}

void TstStepTime::refusedHardware()
{
    PlanInputs in;
    in.hardware.gpu = GpuType::A100_80GB;
    in.hardware.precision = ComputePrecision::Fp8;
    QVERIFY(scalelab::test::throwsInputError([&] { validate(in); }, "plan.hardware.precision"));
    in = PlanInputs{};
    in.hardware.dpOverlap = 1.5;
    QVERIFY(scalelab::test::throwsInputError([&] { validate(in); }, "plan.hardware.dp_overlap"));
    in = PlanInputs{};
    in.hardware.ibBandwidthGBs = 0;
    QVERIFY(scalelab::test::throwsInputError([&] { validate(in); }, "plan.hardware.ib_bandwidth"));
    in = PlanInputs{};
    in.trainTokens = -1;
    QVERIFY(scalelab::test::throwsInputError([&] { validate(in); }, "plan.train_tokens"));
    // FP8 raises the H100's peak from 989 to 1979 TFLOP/s: the compute terms shrink by that.
    in = PlanInputs{};
    in.hardware.precision = ComputePrecision::Fp8;
    QCLOSE(computeStepTime(in).forward * 1979 / 989, computeStepTime(PlanInputs{}).forward);
}

// Korthikanti et al. 2022 (arXiv 2205.05198), Table 5, "present work" (sequence parallelism
// and selective recomputation): iteration time and MFU. Layouts from Table 3 (the presets
// resources/presets/korthikanti-*.json). With the curve's two constants fitted once over all
// ten runs of this file marked "fitted" (docs/STEPTIME.md), ScaleLab gives:
//   22B   1.10 s, MFU 41.5%  ->  1.112 s (+1.1%), MFU 41.2% (-0.7%)
//   175B 13.75 s, MFU 51.4%  -> 14.155 s (+2.9%), MFU 49.9% (-2.9%)
//   530B 37.83 s, MFU 56.0%  -> 39.304 s (+3.9%), MFU 53.9% (-3.7%)
//   1T   71.49 s, MFU 56.3%  -> 77.325 s (+8.2%), MFU 52.0% (-7.6%)
// All are slower than the paper: the curve is a compromise with Llama 3 on H100s, where the
// same curve is too fast (below). The 1T run has no interleaving in Table 3, so its 63-stage
// bubble is 12% of the busy time, the largest term after compute.
void TstStepTime::calibrationKorthikanti_data()
{
    QTest::addColumn<PlanInputs>("in");
    QTest::addColumn<double>("seconds");
    QTest::addColumn<double>("mfu");
    QTest::newRow("22B") << korthikanti(48, 6144, 64, 8, 1, 1, 4, 4) << 1.10 << 0.415;
    QTest::newRow("175B") << korthikanti(96, 12288, 96, 64, 8, 3, 64, 1) << 13.75 << 0.514;
    QTest::newRow("530B") << korthikanti(105, 20480, 128, 280, 35, 3, 280, 1) << 37.83 << 0.560;
    QTest::newRow("1T") << korthikanti(128, 25600, 160, 512, 64, 1, 512, 1) << 71.49 << 0.563;
}

void TstStepTime::calibrationKorthikanti()
{
    QFETCH(PlanInputs, in);
    QFETCH(double, seconds);
    QFETCH(double, mfu);
    const StepTime st = computeStepTime(in);
    qInfo("%s: step %.3f s (paper %.2f, %+.1f%%), MFU %.3f (paper %.3f, %+.1f%%)",
          QTest::currentDataTag(), st.total, seconds, 100 * (st.total / seconds - 1), st.mfu, mfu,
          100 * (st.mfu / mfu - 1));
    QVERIFY(std::fabs(st.total / seconds - 1) < 0.15);
    QVERIFY(std::fabs(st.mfu / mfu - 1) < 0.15);
}

// The Llama 3 paper (arXiv 2407.21783), Table 4: 405B at 8,192 GPUs (t 8, cp 1, p 16, d 64,
// 32 sequences of 8192 per data-parallel rank) reaches 430 TFLOP/s per GPU, BF16 MFU 43%; at
// 16,384 GPUs (d 128, 16 sequences per rank) 400 TFLOP/s, 41%. ScaleLab (v = 4, see
// llama405b): 460 TFLOP/s, MFU 46.5% (+8.1%); 415 TFLOP/s, MFU 42.0% (+2.4%). The drop from 8K
// to 16K GPUs comes from the bubble, (p-1)/(v m) = 15/128 then 15/64 of the busy time; the
// paper's drop is smaller, so ScaleLab's v = 4 is likely fewer chunks than Meta used, or
// their schedule hides more. TP communication is not overlapped here (9% of the step).
void TstStepTime::calibrationLlama3_data()
{
    QTest::addColumn<PlanInputs>("in");
    QTest::addColumn<double>("mfu");
    QTest::addColumn<double>("tflops");
    QTest::newRow("8K GPUs") << llama405b(8192) << 0.43 << 430.0;
    QTest::newRow("16K GPUs") << llama405b(16384) << 0.41 << 400.0;
}

void TstStepTime::calibrationLlama3()
{
    QFETCH(PlanInputs, in);
    QFETCH(double, mfu);
    QFETCH(double, tflops);
    const StepTime st = computeStepTime(in);
    qInfo("%s: step %.3f s, %.0f TFLOP/s per GPU (paper %.0f), MFU %.3f (paper %.2f, %+.1f%%)",
          QTest::currentDataTag(), st.total, st.tflopsPerGpu, tflops, st.mfu, mfu,
          100 * (st.mfu / mfu - 1));
    QVERIFY(std::fabs(st.mfu / mfu - 1) < 0.15);
    QVERIFY(std::fabs(st.tflopsPerGpu / tflops - 1) < 0.15);
}

// Narayanan et al. 2021, Table 1: achieved TFLOP/s per GPU and its share of the A100's 312,
// counting the recomputed forward (their 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) FLOPs per
// step), so the comparison is with ScaleLab's HFU. The four runs without pipelining (t = 1, 2,
// 4, 8: 44%, 44%, 46%, 43%) are among the ten the curve was fitted to; they are the ones that
// vary t, and they show the fraction of peak does not fall with t when h grows with it, which
// the GEMM size h n / (h + n) captures (2048 or close for all four). The six pipelined runs
// were not fitted (their micro-batch and interleaving are assumed, see narayanan()):
//   fitted   1.7B t1 44% -> 44.3%   3.6B t2 44% -> 44.5%   7.5B t4 46% -> 42.3%
//            18.4B t8 43% -> 40.3%
//   checked  39.1B 44% -> 44.4%   76.1B 45% -> 46.4%   145.6B 47% -> 48.0%   310.1B 50% -> 50.1%
//            529.6B 52% -> 50.6%   1T 52% -> 52.0%
void TstStepTime::calibrationNarayanan_data()
{
    QTest::addColumn<PlanInputs>("in");
    QTest::addColumn<double>("share");
    QTest::addColumn<double>("tflops");
    QTest::newRow("1.7B") << narayanan(24, 2304, 24, 1, 1, 32, 512) << 0.44 << 137.0;
    QTest::newRow("3.6B") << narayanan(30, 3072, 32, 2, 1, 64, 512) << 0.44 << 138.0;
    QTest::newRow("7.5B") << narayanan(36, 4096, 32, 4, 1, 128, 512) << 0.46 << 142.0;
    QTest::newRow("18.4B") << narayanan(40, 6144, 48, 8, 1, 256, 1024) << 0.43 << 135.0;
    QTest::newRow("39.1B") << narayanan(48, 8192, 64, 8, 2, 512, 1536) << 0.44 << 138.0;
    QTest::newRow("76.1B") << narayanan(60, 10240, 80, 8, 4, 1024, 1792) << 0.45 << 140.0;
    QTest::newRow("145.6B") << narayanan(80, 12288, 96, 8, 8, 1536, 2304) << 0.47 << 148.0;
    QTest::newRow("310.1B") << narayanan(96, 16384, 128, 8, 16, 1920, 2160) << 0.50 << 155.0;
    QTest::newRow("529.6B") << narayanan(105, 20480, 128, 8, 35, 2520, 2520) << 0.52 << 163.0;
    QTest::newRow("1T") << narayanan(128, 25600, 160, 8, 64, 3072, 3072) << 0.52 << 163.0;
}

void TstStepTime::calibrationNarayanan()
{
    QFETCH(PlanInputs, in);
    QFETCH(double, share);
    QFETCH(double, tflops);
    const StepTime st = computeStepTime(in);
    const double hardwareTflops = st.hfu * st.peakFlops / 1e12;
    qInfo("%s: HFU %.3f (paper %.2f, %+.1f%%), %.0f TFLOP/s per GPU with recomputation (paper "
          "%.0f)",
          QTest::currentDataTag(), st.hfu, share, 100 * (st.hfu / share - 1), hardwareTflops,
          tflops);
    QVERIFY(std::fabs(st.hfu / share - 1) < 0.15);
    QVERIFY(std::fabs(hardwareTflops / tflops - 1) < 0.15);
}

QTEST_GUILESS_MAIN(TstStepTime)
#include "tst_steptime.moc"
