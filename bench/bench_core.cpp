// Core kernels under Google Benchmark: what the tabs compute on every slider step, at the
// sizes the issues name.
//
//   cmake --build --preset release --target bench_core && ./build/release/bench/bench_core

#include "scalelab/core/collectives.h"
#include "scalelab/core/experts.h"
#include "scalelab/core/fp8.h"
#include "scalelab/core/fp8_training.h"
#include "scalelab/core/fp8_view.h"
#include "scalelab/core/layoutsearch.h"
#include "scalelab/core/memory.h"
#include "scalelab/core/pipeline.h"
#include "scalelab/core/random.h"
#include "scalelab/core/tensor_parallel.h"

#include <benchmark/benchmark.h>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

using namespace scalelab::core;

static void BM_MemoryCheckpointSweep(benchmark::State& state)
{
    // The checkpointing chart: every segment count of a 1024-layer model.
    for (auto _ : state) {
        std::int64_t sum = 0;
        for (std::int64_t s = 1; s <= 1024; ++s)
            sum += checkpointedActivationBytes(4096, 8192, 1024, s, 2, 16);
        benchmark::DoNotOptimize(sum);
    }
}
BENCHMARK(BM_MemoryCheckpointSweep);

static void BM_RingAllReduce(benchmark::State& state)
{
    const auto n = static_cast<Eigen::Index>(state.range(0));
    const Eigen::MatrixXd inputs = Eigen::MatrixXd::Random(n, 1024);
    for (auto _ : state)
        benchmark::DoNotOptimize(ringAllReduce(inputs));
}
BENCHMARK(BM_RingAllReduce)->Arg(4)->Arg(16);

static void BM_TensorParallelMlp(benchmark::State& state)
{
    TensorParallelInputs in;
    in.tokens = 512;
    in.dModel = 1024;
    in.dFf = 4096;
    in.ranks = state.range(0);
    for (auto _ : state)
        benchmark::DoNotOptimize(computeTensorParallel(in));
}
BENCHMARK(BM_TensorParallelMlp)->Arg(8)->Unit(benchmark::kMillisecond);

static void BM_PipelineInterleaved(benchmark::State& state)
{
    PipelineInputs in;
    in.stages = 32;
    in.microbatches = 256;
    in.schedule = Schedule::Interleaved;
    in.virtualStages = 4;
    for (auto _ : state)
        benchmark::DoNotOptimize(simulatePipeline(in));
}
BENCHMARK(BM_PipelineInterleaved)->Unit(benchmark::kMillisecond);

static void BM_ExpertsRouter(benchmark::State& state)
{
    // 64 ranks and 256 experts; tokens per rank and top-k as given. 16,384 tokens a rank is the
    // redraw issue's largest case (bench/scenarios/experts-64x1m.json), and top-3 its top_k step.
    ExpertsInputs in;
    in.ranks = 64;
    in.experts = 256;
    in.tokensPerRank = state.range(0);
    in.topK = state.range(1);
    for (auto _ : state)
        benchmark::DoNotOptimize(routeExperts(in));
    state.SetItemsProcessed(state.iterations() * in.ranks * in.tokensPerRank * in.topK);
}
BENCHMARK(BM_ExpertsRouter)
    ->Args({4096, 2})
    ->Args({16384, 2})
    ->Args({16384, 3})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

static MatrixF fp8Matrix()
{
    Fp8Inputs in;
    in.rows = 4096;
    in.cols = 4096;
    return fp8InputMatrix(in);
}

static void BM_Fp8BlockQuantize(benchmark::State& state)
{
    const MatrixF m = fp8Matrix();
    const Fp8Scaling scaling{1, state.range(0), false};
    for (auto _ : state)
        benchmark::DoNotOptimize(fp8BlockQuantize(m, Fp8Format::E4M3, scaling));
    state.SetBytesProcessed(state.iterations() * m.size()
                            * static_cast<std::int64_t>(sizeof(float)));
}
BENCHMARK(BM_Fp8BlockQuantize)->Arg(16)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_Fp8BlockQuantizeInto(benchmark::State& state)
{
    // The same round trip into matrices kept from one call to the next: no copy of the input,
    // no fresh 64 MB allocation; what the "at most 2x a memcpy" is about.
    const MatrixF m = fp8Matrix();
    const Fp8Scaling scaling{1, state.range(0), false};
    MatrixF scales, dequantized;
    for (auto _ : state) {
        benchmark::DoNotOptimize(fp8BlockQuantizeInto(m, Fp8Format::E4M3, scaling,
                                                      Fp8Overflow::Saturate, scales, dequantized));
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * m.size()
                            * static_cast<std::int64_t>(sizeof(float)));
}
BENCHMARK(BM_Fp8BlockQuantizeInto)->Arg(16)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_Fp8NormalMatrix(benchmark::State& state)
{
    // The generator alone: 4096 x 4096 standard normals (ziggurat, chunked streams, all cores).
    Fp8Inputs in;
    in.rows = 4096;
    in.cols = 4096;
    for (auto _ : state)
        benchmark::DoNotOptimize(fp8NormalMatrix(in));
}
BENCHMARK(BM_Fp8NormalMatrix)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_Fp8ReportRoundTrips(benchmark::State& state)
{
    // What `scalelab report` computes: per 1 x 16 block (scales kept) and per tensor, side by side.
    const MatrixF m = fp8Matrix();
    const std::vector<Fp8ScalingJob> jobs = {{{1, 16, false}, false, true, false},
                                             {{0, 0, false}, false, true, false}};
    for (auto _ : state)
        benchmark::DoNotOptimize(
            fp8QuantizeScalings(m, Fp8Format::E4M3, Fp8Overflow::Saturate, jobs));
    state.SetBytesProcessed(state.iterations() * m.size()
                            * static_cast<std::int64_t>(sizeof(float)));
}
BENCHMARK(BM_Fp8ReportRoundTrips)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_Fp8TabRoundTrips(benchmark::State& state)
{
    // What the FP8 tab computes on a change: seven granularities, each with its small-block
    // figures, two of them keeping their dequantized matrices.
    Fp8Inputs in;
    in.rows = 4096;
    in.cols = 4096;
    const Fp8Generated g = fp8Generate(in);
    const std::vector<Fp8ScalingJob> jobs = {
        {{0, 0, false}, true, false, false},      {{0, 0, false}, false, true, true},
        {{1, 0, false}, false, false, false},     {{1, 128, false}, false, false, false},
        {{128, 128, false}, false, false, false}, {{1, 16, false}, false, true, true},
        {{1, 32, true}, false, false, false},
    };
    for (auto _ : state)
        benchmark::DoNotOptimize(fp8QuantizeScalings(
            g.values, Fp8Format::E4M3, Fp8Overflow::Saturate, jobs, 16, g.outlierBlocks));
    state.SetBytesProcessed(state.iterations() * g.values.size()
                            * static_cast<std::int64_t>(sizeof(float)));
}
BENCHMARK(BM_Fp8TabRoundTrips)->Unit(benchmark::kMillisecond)->UseRealTime();

/// The core work of one FP8 tab recompute after an outlier-scale change (ui/tabs/fp8tab.cpp's
/// computeView without its Qt parts): the generated matrix from cached normals, seven round
/// trips, per-block errors and error maps of two of them, the blocks ordered by magnitude.
/// Arg 0: as the tab calls the free functions today; arg 1: as it could, through one
/// Fp8Workspace and fp8ErrorPicture (no fresh 64 MB matrices, each error picture in one pass).
static void BM_Fp8TabOutlierChange(benchmark::State& state)
{
    Fp8Inputs in;
    in.rows = 4096;
    in.cols = 4096;
    const auto normals = std::make_shared<const MatrixF>(fp8NormalMatrix(in));
    const std::vector<Fp8ScalingJob> jobs = {
        {{0, 0, false}, true, false, false},      {{0, 0, false}, false, true, true},
        {{1, 0, false}, false, false, false},     {{1, 128, false}, false, false, false},
        {{128, 128, false}, false, false, false}, {{1, 16, false}, false, true, true},
        {{1, 32, true}, false, false, false},
    };
    Fp8Workspace ws;
    std::shared_ptr<const Fp8Generated> shown; // what the tab's current view holds
    int step = 0;
    for (auto _ : state) {
        in.outlierScale = (step++ % 2) ? 100.0 : 50.0;
        std::shared_ptr<const Fp8Generated> g;
        std::vector<Fp8ScalingOutcome> own;
        const std::vector<Fp8ScalingOutcome>* outcomes = nullptr;
        if (state.range(0) == 0) {
            g = std::make_shared<const Fp8Generated>(fp8ApplyOutliers(*normals, in));
            own =
                fp8QuantizeScalings(g->values, in.format, in.overflow, jobs, 16, g->outlierBlocks);
            outcomes = &own;
        } else {
            g = ws.generate(in);
            outcomes =
                &ws.quantizeScalings(g->values, in.format, in.overflow, jobs, 16, g->outlierBlocks);
        }
        const MatrixF& tensorDeq = (*outcomes)[1].dequantized;
        const MatrixF& blockDeq = (*outcomes)[5].dequantized;
        if (state.range(0) == 0) {
            std::vector<Fp8BlockError> tensorErrors;
            Eigen::MatrixXd tensorMap;
            std::thread tensorSide([&] {
                tensorErrors = fp8BlockErrors(g->values, tensorDeq, 16);
                tensorMap = fp8AbsErrorMap(g->values, tensorDeq, 1024, 1024);
            });
            const auto blockErrors = fp8BlockErrors(g->values, blockDeq, 16);
            const auto blockMap = fp8AbsErrorMap(g->values, blockDeq, 1024, 1024);
            tensorSide.join();
            benchmark::DoNotOptimize(fp8OrderByMagnitude(tensorErrors));
            benchmark::DoNotOptimize(blockErrors);
            benchmark::DoNotOptimize(blockMap);
        } else {
            // Each picture already uses every core.
            const Fp8ErrorPicture tensor = fp8ErrorPicture(g->values, tensorDeq, 16, 1024, 1024);
            const Fp8ErrorPicture block = fp8ErrorPicture(g->values, blockDeq, 16, 1024, 1024);
            benchmark::DoNotOptimize(fp8OrderByMagnitude(tensor.blocks));
            benchmark::DoNotOptimize(block);
        }
        shown = g; // the previous view is let go when the new one is shown
    }
}
BENCHMARK(BM_Fp8TabOutlierChange)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

/// One step of a dragged outlier slider at 4096 x 4096, as the FP8 tab computes it
/// (computeFp8View with its workspace and the view shown before): arg 0 the whole comparison,
/// arg 1 the preview from two bands of 128 rows (Fp8ViewOptions::preview).
static void BM_Fp8ViewOutlierStep(benchmark::State& state)
{
    Fp8Inputs in;
    in.rows = 4096;
    in.cols = 4096;
    Fp8ViewOptions options;
    options.workspace = std::make_shared<Fp8Workspace>();
    options.previous = std::make_shared<const Fp8View>(computeFp8View(in, options));
    options.preview = state.range(0) == 1;
    int step = 0;
    for (auto _ : state) {
        in.outlierScale = (step++ % 2) ? 100.0 : 50.0;
        auto view = std::make_shared<const Fp8View>(computeFp8View(in, options));
        if (view->preview != options.preview)
            state.SkipWithError("not the comparison asked for");
        options.previous = std::move(view); // the view shown (a preview keeps the exact maps)
    }
}
BENCHMARK(BM_Fp8ViewOutlierStep)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_Fp8BlockErrorsAndMap(benchmark::State& state)
{
    // The tab's per-block errors and error map of one round trip.
    const MatrixF m = fp8Matrix();
    const Fp8Result r = fp8BlockQuantize(m, Fp8Format::E4M3, {1, 16, false});
    for (auto _ : state) {
        benchmark::DoNotOptimize(fp8BlockErrors(m, r.dequantized, 16));
        benchmark::DoNotOptimize(fp8AbsErrorMap(m, r.dequantized, 1024, 1024));
    }
}
BENCHMARK(BM_Fp8BlockErrorsAndMap)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_Fp8Memcpy(benchmark::State& state)
{
    // The floor the quantizer is compared with: one plain copy of the same matrix.
    const MatrixF m = fp8Matrix();
    std::vector<float> out(static_cast<std::size_t>(m.size()));
    for (auto _ : state) {
        std::memcpy(out.data(), m.data(), out.size() * sizeof(float));
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * m.size()
                            * static_cast<std::int64_t>(sizeof(float)));
}
BENCHMARK(BM_Fp8Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_Fp8Accumulation(benchmark::State& state)
{
    // The FP8 tab's accumulation sweep (K = 256 ... 16384, 16 x 16 outputs, three ways of
    // adding) with each rounding: 0 aligned blocks (the default), 1 truncate, 2 nearest.
    Fp8AccumulationInputs in;
    constexpr AccumulatorRounding roundings[] = {AccumulatorRounding::AlignedBlock,
                                                 AccumulatorRounding::Truncate,
                                                 AccumulatorRounding::Nearest};
    in.rounding = roundings[state.range(0)];
    for (auto _ : state)
        benchmark::DoNotOptimize(fp8Accumulation(in, Fp8Format::E4M3, 16, Fp8Overflow::Saturate));
}
BENCHMARK(BM_Fp8Accumulation)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_Fp8Policy(benchmark::State& state)
{
    // The scaling-policy experiment at its defaults: 64 steps of a 16 x 256 tensor.
    const Fp8PolicyInputs in;
    for (auto _ : state)
        benchmark::DoNotOptimize(fp8Policy(in, Fp8Format::E4M3, 16, Fp8Overflow::Saturate));
}
BENCHMARK(BM_Fp8Policy)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_LayoutSearch1T(benchmark::State& state)
{
    // The largest search: a 1T-parameter GPT (Korthikanti et al.'s Table 3 shape: 128
    // layers, h 25600, 160 heads, 4h MLP, vocab 51200, s 2048) on 4096 A100 80GB GPUs, 8 per
    // node, global batch 4096, on `threads` worker threads.
    PlanInputs in;
    in.model.layers = 128;
    in.model.hidden = 25600;
    in.model.heads = 160;
    in.model.kvHeads.reset();
    in.model.ffnHidden = 4 * 25600;
    in.model.vocab = 51200;
    in.model.gatedMlp = false;
    in.model.tiedEmbeddings = true;
    in.sequence = 2048;
    in.gpus = 4096;
    in.globalBatch = 4096;
    in.hardware.gpu = GpuType::A100_80GB;
    in.hardware.nvlinkBandwidthGBs = 300;
    in.hardware.ibBandwidthGBs = 25;
    LayoutSearchOptions options;
    options.threads = state.range(0);
    std::int64_t fitting = 0;
    std::int64_t enumerated = 0;
    std::int64_t pruned = 0;
    for (auto _ : state) {
        const LayoutSearchResult r = searchLayouts(in, options);
        fitting = r.fitting;
        enumerated = r.enumerated;
        pruned = r.pruned;
        benchmark::DoNotOptimize(r.ranked.data());
    }
    state.counters["enumerated"] = static_cast<double>(enumerated);
    state.counters["pruned"] = static_cast<double>(pruned);
    state.counters["fitting"] = static_cast<double>(fitting);
}
BENCHMARK(BM_LayoutSearch1T)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();

// Each schedule the pipeline tab compares, at the tab's largest slider values (p = 32,
// m = 256, v = 2): the tab simulates all seven on every step.
static void BM_PipelineEverySchedule(benchmark::State& state)
{
    PipelineInputs in;
    in.stages = 32;
    in.microbatches = 256;
    in.virtualStages = 2;
    in.schedule = static_cast<Schedule>(state.range(0));
    for (auto _ : state)
        benchmark::DoNotOptimize(simulatePipeline(in));
}
BENCHMARK(BM_PipelineEverySchedule)->DenseRange(0, 6)->Unit(benchmark::kMillisecond);
