#pragma once

#include <cstdint>
#include <vector>

namespace scalelab::core {

enum class Schedule {
    GPipe, ///< all forwards, then all backwards
    OneFOneB, ///< 1F1B (PipeDream-flush): warm-up forwards, then one forward one backward
    Interleaved, ///< interleaved 1F1B: each stage holds `virtualStages` model chunks
    ZeroBubbleH1, ///< ZB-H1 (Qi et al., ICLR 2024): 1F1B's memory, W passes moved into the tail
    ZeroBubbleH2, ///< ZB-H2 (same paper): up to 2p - 1 microbatches in flight, no bubble
    /// DualPipe (DeepSeek-V3 technical report): p devices, device i holds stages i and p-1-i;
    /// half the microbatches enter at device 0, half at device p-1; a forward and a backward of
    /// two microbatches run overlapped as one F&B pass
    DualPipe,
    /// DualPipeV (DualPipe's "cut-in-half" V shape): p/2 devices for p stages, device i holds
    /// stages i and p-1-i; every microbatch enters at device 0, goes down and comes back
    DualPipeV,
};

/// A pass of one microbatch through one chunk. Schedules that split the backward (the zero-bubble
/// ones, see splitsBackward) run it as Backward (B, the input gradient, on the critical path) and
/// Weight (W, the weight gradient, deferrable); the others run one Backward of B + W.
/// ForwardBackward (DualPipe's F&B) is a forward and a whole backward (B + W) of two different
/// microbatches run overlapped on one device, as one pass of f + b + w.
enum class Pass { Forward, Backward, Weight, ForwardBackward };

/// Whether `s` runs the weight gradient as passes of its own (Pass::Weight), at least some of
/// the time: the zero-bubble schedules and the DualPipe ones.
bool splitsBackward(Schedule s);

/// Whether `s` is DualPipe or DualPipeV: two model chunks per device (stages i and p-1-i),
/// overlapped F&B passes.
bool isDualSchedule(Schedule s);

/// Inputs of the pipeline simulator (scenario section `pipeline`). Times are in one arbitrary
/// unit, the time of one microbatch through one whole stage.
struct PipelineInputs {
    std::int64_t stages = 4; ///< p, pipeline stages, one per rank
    std::int64_t microbatches = 12; ///< m
    Schedule schedule = Schedule::GPipe;
    std::int64_t virtualStages = 2; ///< v, model chunks per stage; used by Interleaved only
    double forwardTime = 1.0; ///< one microbatch's forward through one stage
    /// B: one microbatch's input-gradient backward through one stage. With the default
    /// weightTime of 0 it is the whole backward, as it was before the backward was split.
    double backwardTime = 2.0;
    /// W: one microbatch's weight-gradient backward through one stage (scenario key
    /// `pipeline.weight_time`). The whole backward is B + W: schedules that do not split it run
    /// one backward pass of backwardTime + weightTime. The default 0 keeps every scenario
    /// written before the split (backward_time = the whole backward) to the same figures.
    double weightTime = 0.0;

    bool operator==(const PipelineInputs&) const = default;
};

/// Devices (Gantt rows) of a schedule: p, or p/2 for DualPipeV (two stages per device).
std::int64_t pipelineDevices(const PipelineInputs& in);

/// The model stage that chunk `chunk` of device `device` holds: c p + s in general (chunk c of
/// stage s is model part c p + s), and stage `device` (chunk 0) or p-1-`device` (chunk 1) in
/// the DualPipe schedules.
int modelStageOf(const PipelineInputs& in, int device, int chunk);

/// One pass of one microbatch through one model chunk of one stage.
struct PipelineEvent {
    int stage = 0; ///< the device (Gantt row): 0..p-1, 0..p/2-1 for DualPipeV
    int microbatch = 0; ///< 0..m-1
    /// 0..v-1 (always 0 unless interleaved); in DualPipe(V) 0 for the device's stage i, 1 for
    /// its stage p-1-i
    int chunk = 0;
    Pass pass = Pass::Forward; ///< Weight only in schedules that split the backward
    double start = 0.0;
    double end = 0.0;
    /// ForwardBackward only: the microbatch and chunk of the overlapped backward (the forward's
    /// are `microbatch` and `chunk`); -1 otherwise.
    int pairMicrobatch = -1;
    int pairChunk = 0;
    /// A Backward that computes the weight gradient too (B + W in one pass) in a schedule that
    /// otherwise splits it (DualPipe's backwards outside its zero-bubble phases).
    bool withWeight = false;
};

struct PipelineResult {
    /// Every pass, ordered by stage, then by start time.
    std::vector<PipelineEvent> events;
    double makespan = 0.0; ///< end of the last pass (first starts at 0)
    /// Closed form: (p-1)/(m+p-1), (p-1)/(v m+p-1) interleaved; for the zero-bubble schedules
    /// Qi et al.'s bubble size over itself plus one stage's work (see zeroBubbleBubbleTime).
    double bubbleFraction = 0.0;
    double simulatedBubbleFraction = 0.0; ///< idle stage-time / (p * makespan), measured
    /// Megatron-LM's closed form of the same bubble: bubble time over ideal time, (p-1)/m, and
    /// (p-1)/(v m) interleaved (see pipelineBubbleOverIdeal); for the zero-bubble schedules Qi et
    /// al.'s bubble size over one stage's work m (f + b + w), their closed-form bubble rate.
    double bubbleOverIdeal = 0.0;
    /// Megatron-LM's ratio measured on the simulated schedule: idle stage-time over busy
    /// stage-time (the ideal time is what the stages would need with no bubble at all).
    double simulatedBubbleOverIdeal = 0.0;
    /// Per stage, the largest number of microbatches whose forward has run and whose backward
    /// has not finished, i.e. whose activations the stage holds at once (counted per
    /// microbatch and chunk for interleaved schedules). A (microbatch, chunk) pair counts over
    /// the half-open interval [start of its forward, end of its backward) on that stage, so a
    /// backward ending exactly when the next forward starts is not counted twice. Because a
    /// stage runs one pass at a time, this is the largest (forwards - backwards) over the
    /// prefixes of the stage's order: GPipe gives m, 1F1B min(p - s, m) on stage s.
    std::vector<int> peakInFlight;
    /// Per stage, the activations held at the peak in units of one microbatch's activations for
    /// the whole stage: peakInFlight / v, because a chunk holds 1/v of its stage's layers (v = 1
    /// unless interleaved). This is the figure that compares schedules: GPipe m, 1F1B
    /// min(p - s, m), interleaved p + (p-1)/v on stage 0 when m v is large enough, which is
    /// Megatron-LM's p (1 + (p-1)/(p v)).
    std::vector<double> peakActivations;
    /// Per stage, the most microbatches whose B has run and whose W has not: weight gradients
    /// still owed, each keeping the (smaller) inputs W needs. Zero unless the backward is split.
    std::vector<int> peakWeightPending;
    /// Qi et al.'s bubble, measured: the largest idle time of one stage between its own first
    /// pass and its own last pass. Without a synchronising optimizer step (their post-validation)
    /// a stage starts the next iteration as soon as it ends this one, so this is the time per
    /// iteration a stage loses; it is makespan - m (f + b + w) on the first stage of GPipe, 1F1B
    /// and ZB-H1, and 0 for ZB-H2's parallelogram.
    double bubbleTime = 0.0;
    /// Qi et al.'s bubble rate: bubbleTime over one stage's work m (f + b + w). With
    /// f = b = w it is (p-1)/m for 1F1B, (p-1)/(3m) for ZB-H1 and 0 for ZB-H2 at m >= 2p - 1.
    /// For DualPipe(V) the work of one device: m (f + b + w), 2 m (f + b + w) for DualPipeV.
    double bubbleRate = 0.0;
    /// Devices the schedule runs on (rows of the Gantt, entries of the per-stage vectors above,
    /// which are per device): p, or p/2 for DualPipeV.
    int devices = 0;
    /// Parameters one device holds, in stages' worth (1/p of the model each): 1, or 2 for the
    /// DualPipe schedules (stages i and p-1-i); interleaved's v chunks of 1/v stage make 1.
    double parametersPerDevice = 1.0;
};

/// Largest p * m * v the simulator accepts (bounds memory and time; more is refused with an
/// InputError naming `pipeline.microbatches`).
inline constexpr std::int64_t kMaxPipelinePasses = 4'000'000;
/// Most stages accepted (`pipeline.stages`): the Gantt gives every stage a row of its own, and
/// no real pipeline has more than a few hundred.
inline constexpr std::int64_t kMaxPipelineStages = 1024;

/// Throws InputError naming the field (`pipeline.stages`, ...) for inputs the simulator refuses:
/// stages in 1..kMaxPipelineStages, microbatches, virtual_stages >= 1; forward and backward
/// times finite and > 0, weight_time finite and >= 0;
/// interleaved needs microbatches a multiple of stages; DualPipe even stages and even
/// microbatches >= 2p, DualPipeV even stages and microbatches >= p; p m v (v = 1 unless
/// interleaved) at most kMaxPipelinePasses (`pipeline.microbatches`). Also refused, naming the
/// time: a time whose share per chunk underflows below the smallest normal double, or times so
/// large that p times the schedule's length would overflow to infinity.
void validate(const PipelineInputs& in);

/// The chapter's bubble fraction (p-1)/(m+p-1); with v > 1, the interleaved (p-1)/(v m+p-1).
/// Throws InputError (`pipeline.stages`, `pipeline.microbatches`, `pipeline.virtual_stages`) for
/// an argument below 1.
double pipelineBubbleFraction(std::int64_t stages, std::int64_t microbatches,
                              std::int64_t virtualStages = 1);

/// Megatron-LM's bubble (Narayanan et al. 2021): bubble time over ideal time, (p-1)/m; with
/// v > 1, the interleaved (p-1)/(v m). It is the chapter's idle share f read as f / (1 - f), so
/// it passes 100 % when there are fewer microbatches than stages minus one. Throws InputError
/// like pipelineBubbleFraction.
double pipelineBubbleOverIdeal(std::int64_t stages, std::int64_t microbatches,
                               std::int64_t virtualStages = 1);

/// The interleaved 1F1B bubble over the busy time for any number of microbatches. Counted in
/// units of one microbatch's forward and backward on one GPU (all v of its chunks), a step
/// lasts max(m, p) + (min(m, p) - 1) / v units, of which m are busy. With m >= p that is
/// pipelineBubbleOverIdeal's (p-1)/(v m). With m < p the pipeline never fills: the first
/// microbatch's trip through all p stages sets the step and each other one adds a chunk, so
/// the bubble is ((p - m) v + m - 1)/(v m), where the (p-1)/(v m) of the closed form would
/// promise interleaving a gain it cannot give. The plan's step time uses it (a plan accepts
/// any m; the Pipeline tab's interleaved schedule needs m to be a multiple of p). Throws
/// InputError like pipelineBubbleFraction.
double pipelineBubbleOverBusy(std::int64_t stages, std::int64_t microbatches,
                              std::int64_t virtualStages = 1);

/// Qi et al.'s closed-form bubble of a zero-bubble schedule (their Table 2), idle time per stage
/// per iteration: ZB-H1 (p-1)(f + b - w), ZB-H2 (p-1)(f + b - 2w), at least 0. It assumes
/// m >= p (ZB-H1) or m >= 2p - 1 (ZB-H2) and w <= f; the simulation shows what happens outside.
/// Throws InputError (`pipeline.schedule`) for a schedule that does not split the backward.
double zeroBubbleBubbleTime(const PipelineInputs& in);

/// The DualPipe README's bubble (its table "based on the same number of PP stages"), idle time
/// per device per iteration: (p/2 - 1)(F&B + B - 3W), where its B is a whole backward (b + w
/// here), W is w, and ScaleLab's F&B takes f + b + w (the overlap hides communication, not
/// compute): (p/2 - 1)(f + 2b - w), at least 0. The same for DualPipeV. Throws InputError
/// (`pipeline.schedule`) for other schedules.
double dualPipeBubbleTime(const PipelineInputs& in);

/// Simulates the schedule pass by pass: each stage runs its passes in the schedule's order, and
/// a pass starts when its stage is free and the pass it depends on has ended (the forward of the
/// previous chunk, the backward of the next one). Validates first.
///
/// Model: chunk c of stage s holds model part (virtual stage) k = c p + s of p v parts; a
/// chunk's pass takes forwardTime / v or (backwardTime + weightTime) / v (v = 1 unless
/// interleaved), or, in a schedule that splits the backward, backwardTime for B and weightTime
/// for W; no communication time. Forward (j, k) needs forward (j, k-1); backward (j, k) needs
/// backward (j, k+1) (B only: W is not on the path); the backward of the last part needs its own
/// forward; weight (j, k) needs backward (j, k). Times come from the order and these
/// dependencies, never from the closed form.
PipelineResult simulatePipeline(const PipelineInputs& in);

/// The schedule's order of passes, without times (start = end = 0): stage 0's 2 m v passes (3 m
/// when the backward is split) in the order it runs them, then stage 1's, and so on. GPipe, 1F1B
/// and interleaved are warm-up forwards, then
/// one forward and one backward in turn, then the remaining backwards; the n-th forward of a
/// stage is (microbatch (n / (p v)) p + n % p, chunk (n / p) % v) and its n-th backward the same
/// microbatch with chunk v - 1 - (n / p) % v. Warm-up forwards on stage s:
///  - GPipe: m (all forwards first);
///  - 1F1B (PipeDream-flush): min(p - s - 1, m);
///  - Interleaved (Megatron-LM's interleaved 1F1B): min(2 (p - s - 1) + (v - 1) p, m v).
/// ZB-H1 runs 1F1B's forwards and B passes in 1F1B's order, and stage s holds back its W
/// passes until s of them are owed, runs one after each B from then on, and the held-back ones
/// last (they fill the tail that 1F1B leaves idle; each still owes at most s). ZB-H2 lets stage
/// s run up to min(2 (p - s) - 1, m) forwards ahead of its B passes, and its order is list
/// scheduling in time: a free stage runs its next B if it is ready, else its next F if ready
/// and allowed, else a W it owes, else waits.
/// DualPipe and DualPipeV follow the reference implementation's eight steps (deepseek-ai/
/// DualPipe, dualpipe.py and dualpipev.py) on each device: warm-up forwards of the near
/// direction, forwards of both, B+W+F with the backward split, the steady state of F&B pairs,
/// then backwards (the later half split, their W deferred) and the owed W passes last.
/// Validates first.
std::vector<PipelineEvent> pipelineOrder(const PipelineInputs& in);

/// Times a given order (as pipelineOrder returns it, start and end ignored) the way
/// simulatePipeline does, e.g. to try a hand-made schedule. Validates `in` first. Throws
/// std::invalid_argument if `order` is not every pass of `in` exactly once, grouped by stage,
/// and std::logic_error naming the stuck pass if the order deadlocks (a stage's next pass waits
/// for a pass that can never run). `bubbleFraction` is still the schedule's closed form.
PipelineResult simulatePipelineOrder(const PipelineInputs& in, std::vector<PipelineEvent> order);

} // namespace scalelab::core
