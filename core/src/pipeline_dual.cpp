#include "pipeline_dual.h"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace scalelab::core::detail {

namespace {

// Sizes of a validated DualPipe or DualPipeV problem. Both are built from one "V": `half`
// devices through which `perDirection` microbatches go down (chunk 0) and come back (chunk 1).
// DualPipeV is one V; DualPipe is two mirrored Vs, one per direction, devices 0..p/2-1 and
// p-1..p/2, whose middle devices hand over to each other instead of to themselves.
struct DualShape {
    int p = 2; // stages
    int m = 2; // microbatches
    int devices = 1; // p, or p/2 for DualPipeV
    int half = 1; // devices of one V: p/2
    int perDirection = 2; // microbatches through one V: m/2 for DualPipe, m for DualPipeV
    bool mirrored = true; // DualPipe
};

DualShape dualShapeOf(const PipelineInputs& in)
{
    DualShape sh;
    sh.p = static_cast<int>(in.stages);
    sh.m = static_cast<int>(in.microbatches);
    sh.mirrored = in.schedule == Schedule::DualPipe;
    sh.half = sh.p / 2;
    sh.devices = sh.mirrored ? sh.p : sh.half;
    sh.perDirection = sh.mirrored ? sh.m / 2 : sh.m;
    return sh;
}

// Which microbatches go down from device 0: all for DualPipeV, the first half for DualPipe.
bool fromDeviceZero(const DualShape& sh, int microbatch)
{
    return !sh.mirrored || microbatch < sh.perDirection;
}

// The device and chunk that run model stage k of microbatch j.
std::pair<int, int> placeOf(const DualShape& sh, int j, int k)
{
    if (sh.mirrored)
        return fromDeviceZero(sh, j) ? std::pair{k, 0} : std::pair{sh.p - 1 - k, 1};
    return k < sh.half ? std::pair{k, 0} : std::pair{sh.p - 1 - k, 1};
}

int stageOf(const DualShape& sh, int device, int chunk)
{
    return chunk == 0 ? device : sh.p - 1 - device;
}

std::size_t cell(const DualShape& sh, int j, int k)
{
    return static_cast<std::size_t>(j) * static_cast<std::size_t>(sh.p)
        + static_cast<std::size_t>(k);
}

// One device's passes in the reference implementation's terms: "phase" 0 is the direction
// that enters at the device's own end of the pipeline, phase 1 the other one (on DualPipe's
// second half of devices the two swap, as `phase ^= is_in_second_half` does there).
struct DeviceOrder {
    const DualShape& sh;
    int device;
    std::vector<PipelineEvent>& out;
    int nextForward[2] = {0, 0};
    int nextBackward[2] = {0, 0};
    std::deque<std::pair<int, int>> owed; // (microbatch, chunk) whose W is deferred, oldest first

    // The microbatch and chunk of the i-th pass of `phase` on this device.
    std::pair<int, int> slot(int phase, int i) const
    {
        if (!sh.mirrored)
            return {i, phase};
        const bool down = (phase == 0) != (device >= sh.half);
        return down ? std::pair{i, 0} : std::pair{sh.perDirection + i, 1};
    }
    void push(Pass pass, std::pair<int, int> at)
    {
        PipelineEvent e;
        e.stage = device;
        e.microbatch = at.first;
        e.chunk = at.second;
        e.pass = pass;
        out.push_back(e);
    }
    void forward(int phase) { push(Pass::Forward, slot(phase, nextForward[phase]++)); }
    // A backward; `split` defers its W (the zero-bubble trick), otherwise it is B + W at once.
    void backward(int phase, bool split)
    {
        const auto at = slot(phase, nextBackward[phase]++);
        push(Pass::Backward, at);
        out.back().withWeight = !split;
        if (split)
            owed.push_back(at);
    }
    void weight()
    {
        push(Pass::Weight, owed.front());
        owed.pop_front();
    }
    // F&B: the forward of `forwardPhase` overlapped with a whole backward of the other phase.
    void overlapped(int forwardPhase, int backwardPhase)
    {
        push(Pass::ForwardBackward, slot(forwardPhase, nextForward[forwardPhase]++));
        const auto b = slot(backwardPhase, nextBackward[backwardPhase]++);
        out.back().pairMicrobatch = b.first;
        out.back().pairChunk = b.second;
    }
};

// The eight steps of dualpipe.py / dualpipev.py for one device (h is its place in its V).
void appendDevice(std::vector<PipelineEvent>& out, const DualShape& sh, int device)
{
    DeviceOrder o{sh, device, out, {0, 0}, {0, 0}, {}};
    const int v = sh.half;
    const int h = sh.mirrored ? std::min(device, sh.p - 1 - device) : device;
    const int n = sh.perDirection;
    const bool middle = h == v - 1;
    for (int i = 0; i < 2 * (v - h - 1); ++i) // 1: forwards of the near direction
        o.forward(0);
    for (int i = 0; i < h + 1; ++i) { // 2: one forward of each direction in turn
        o.forward(0);
        o.forward(1);
    }
    for (int i = 0; i < v - h - 1; ++i) { // 3: B, its W at once, F
        o.backward(1, true);
        o.weight();
        o.forward(1);
    }
    for (int i = 0; i < n - 2 * v + h + 1; ++i) { // 4: the steady state of F&B pairs
        if (i == 0 && middle) {
            // The reference runs these two apart "to further reduce bubble size".
            o.forward(0);
            o.backward(1, false);
        } else {
            o.overlapped(0, 1);
        }
        o.overlapped(1, 0);
    }
    for (int i = 0; i < v - h - 1; ++i) { // 5: B, F&B
        o.backward(1, false);
        o.overlapped(1, 0);
    }
    bool split = false; // 6: backwards; from the middle one on, W is deferred
    for (int i = 0; i < h + 1; ++i) {
        if (i == (h + 1) / 2 && h % 2 == 1)
            split = true;
        o.backward(1, split);
        if (i == (h + 1) / 2 && h % 2 == 0)
            split = true;
        o.backward(0, split);
    }
    for (int i = 0; i < v - h - 1; ++i) { // 7: a deferred W, a split B
        o.weight();
        o.backward(0, true);
    }
    while (!o.owed.empty()) // 8: the W passes still owed (h + 1 of them)
        o.weight();
}

// When each forward and backward (B) ended, by (microbatch, stage); negative until it has.
struct DualProgress {
    std::vector<double> forwardEnd, backwardEnd;
    std::vector<std::size_t> next, end; // per device: next pass, one past its last
    std::vector<double> freeAt;
};

// When the inputs of the forward of (j, k) are ready, if they are.
std::optional<double> forwardReady(const DualShape& sh, const DualProgress& pr, int j, int k)
{
    if (k == 0)
        return 0.0;
    const double e = pr.forwardEnd[cell(sh, j, k - 1)];
    return e < 0 ? std::nullopt : std::optional(e);
}

// When the output gradient the backward of (j, k) needs is ready (the last stage needs its
// own forward).
std::optional<double> backwardReady(const DualShape& sh, const DualProgress& pr, int j, int k)
{
    const double e =
        k + 1 < sh.p ? pr.backwardEnd[cell(sh, j, k + 1)] : pr.forwardEnd[cell(sh, j, k)];
    return e < 0 ? std::nullopt : std::optional(e);
}

std::optional<double> readyAt(const DualShape& sh, const DualProgress& pr, const PipelineEvent& e)
{
    const int k = stageOf(sh, e.stage, e.chunk);
    switch (e.pass) {
    case Pass::Forward:
        return forwardReady(sh, pr, e.microbatch, k);
    case Pass::Backward:
        return backwardReady(sh, pr, e.microbatch, k);
    case Pass::Weight: {
        const double b = pr.backwardEnd[cell(sh, e.microbatch, k)];
        return b < 0 ? std::nullopt : std::optional(b);
    }
    case Pass::ForwardBackward: {
        const auto f = forwardReady(sh, pr, e.microbatch, k);
        const auto b = backwardReady(sh, pr, e.pairMicrobatch, stageOf(sh, e.stage, e.pairChunk));
        return f && b ? std::optional(std::max(*f, *b)) : std::nullopt;
    }
    }
    return std::nullopt;
}

double durationOf(const PipelineInputs& in, const PipelineEvent& e)
{
    switch (e.pass) {
    case Pass::Forward:
        return in.forwardTime;
    case Pass::Backward:
        return e.withWeight ? in.backwardTime + in.weightTime : in.backwardTime;
    case Pass::Weight:
        return in.weightTime;
    case Pass::ForwardBackward:
        // ScaleLab's F&B: overlap hides communication, not compute (see dualPipeBubbleTime).
        return in.forwardTime + in.backwardTime + in.weightTime;
    }
    return 0.0;
}

// Runs device d along its order until a pass must wait; returns whether any pass ran.
bool runDevice(const PipelineInputs& in, const DualShape& sh, std::vector<PipelineEvent>& order,
               DualProgress& pr, int d)
{
    const auto du = static_cast<std::size_t>(d);
    const std::size_t before = pr.next[du];
    while (pr.next[du] < pr.end[du]) {
        PipelineEvent& e = order[pr.next[du]];
        const auto ready = readyAt(sh, pr, e);
        if (!ready)
            break;
        e.start = std::max(pr.freeAt[du], *ready);
        e.end = e.start + durationOf(in, e);
        pr.freeAt[du] = e.end;
        const int k = stageOf(sh, d, e.chunk);
        if (e.pass == Pass::Forward || e.pass == Pass::ForwardBackward)
            pr.forwardEnd[cell(sh, e.microbatch, k)] = e.end;
        if (e.pass == Pass::Backward)
            pr.backwardEnd[cell(sh, e.microbatch, k)] = e.end;
        if (e.pass == Pass::ForwardBackward)
            pr.backwardEnd[cell(sh, e.pairMicrobatch, stageOf(sh, d, e.pairChunk))] = e.end;
        ++pr.next[du];
    }
    return pr.next[du] != before;
}

std::string describe(const PipelineEvent& e)
{
    const char* names[] = {"forward", "backward", "weight pass", "F&B"};
    return std::string(names[static_cast<int>(e.pass)]) + " of microbatch "
        + std::to_string(e.microbatch) + ", chunk " + std::to_string(e.chunk) + " on device "
        + std::to_string(e.stage);
}

// Times every pass. A pass waits only on passes of its own device or a neighbour, so progress
// on device d can only unblock d - 1 and d + 1: linear in the number of passes.
std::vector<double> runDual(const PipelineInputs& in, const DualShape& sh,
                            std::vector<PipelineEvent>& order, DualProgress& pr)
{
    std::vector<int> work;
    std::vector<char> queued(static_cast<std::size_t>(sh.devices), 1);
    for (int d = sh.devices - 1; d >= 0; --d)
        work.push_back(d);
    while (!work.empty()) {
        const int d = work.back();
        work.pop_back();
        queued[static_cast<std::size_t>(d)] = 0;
        if (!runDevice(in, sh, order, pr, d))
            continue;
        for (const int t : {d - 1, d + 1}) {
            const auto tu = static_cast<std::size_t>(t);
            if (t >= 0 && t < sh.devices && !queued[tu] && pr.next[tu] < pr.end[tu]) {
                queued[tu] = 1;
                work.push_back(t);
            }
        }
    }
    for (std::size_t d = 0; d < pr.next.size(); ++d)
        if (pr.next[d] < pr.end[d])
            throw std::logic_error("pipeline schedule deadlock: the " + describe(order[pr.next[d]])
                                   + " waits for a pass that can never run");
    return pr.freeAt;
}

// Counts one pass of (j, k) of kind `kind` (0 F, 1 B, 2 W), refusing one that is not on the
// device holding stage k of j or that came before.
void countPass(const DualShape& sh, std::vector<char>& seen, int d, int j, int chunk, int kind)
{
    if (j < 0 || j >= sh.m || chunk < 0 || chunk > 1)
        throw std::invalid_argument("pipeline order: a pass out of range on device "
                                    + std::to_string(d));
    const int k = stageOf(sh, d, chunk);
    if (placeOf(sh, j, k) != std::pair{d, chunk})
        throw std::invalid_argument("pipeline order: microbatch " + std::to_string(j)
                                    + " does not pass chunk " + std::to_string(chunk)
                                    + " of device " + std::to_string(d));
    char& s = seen[cell(sh, j, k) * 3 + static_cast<std::size_t>(kind)];
    if (s)
        throw std::invalid_argument("pipeline order: microbatch " + std::to_string(j)
                                    + " passes stage " + std::to_string(k) + " twice");
    s = 1;
}

// Throws unless `order` holds, device by device, every F and B of every (microbatch, stage)
// once and a W exactly for each B without its weight gradient; sets pr's device ranges.
void checkDualOrder(const DualShape& sh, const std::vector<PipelineEvent>& order, DualProgress& pr)
{
    const auto cells = static_cast<std::size_t>(sh.m) * static_cast<std::size_t>(sh.p);
    std::vector<char> seen(cells * 3, 0), withWeight(cells, 0);
    pr.next.assign(static_cast<std::size_t>(sh.devices), order.size());
    pr.end.assign(static_cast<std::size_t>(sh.devices), order.size());
    int device = -1; // the device of the previous entry
    for (std::size_t i = 0; i < order.size(); ++i) {
        const PipelineEvent& e = order[i];
        if (e.stage < device || e.stage >= sh.devices)
            throw std::invalid_argument("pipeline order: entry " + std::to_string(i)
                                        + " is not grouped by device");
        for (int d = device + 1; d <= e.stage; ++d)
            pr.next[static_cast<std::size_t>(d)] = i;
        device = e.stage;
        if (e.pass != Pass::Weight && e.pass != Pass::Backward)
            countPass(sh, seen, e.stage, e.microbatch, e.chunk, 0);
        if (e.pass == Pass::Weight)
            countPass(sh, seen, e.stage, e.microbatch, e.chunk, 2);
        if (e.pass == Pass::Backward || e.pass == Pass::ForwardBackward) {
            const bool pair = e.pass == Pass::ForwardBackward;
            const int j = pair ? e.pairMicrobatch : e.microbatch;
            const int c = pair ? e.pairChunk : e.chunk;
            countPass(sh, seen, e.stage, j, c, 1);
            if (pair || e.withWeight)
                withWeight[cell(sh, j, stageOf(sh, e.stage, c))] = 1;
        }
    }
    for (std::size_t d = 1; d < pr.end.size(); ++d)
        pr.end[d - 1] = pr.next[d];
    for (std::size_t c = 0; c < cells; ++c)
        if (!seen[c * 3] || !seen[c * 3 + 1] || seen[c * 3 + 2] == withWeight[c])
            throw std::invalid_argument(
                "pipeline order: microbatch " + std::to_string(c / static_cast<std::size_t>(sh.p))
                + " misses a pass of stage " + std::to_string(c % static_cast<std::size_t>(sh.p)));
}

// Peak activations and owed weight gradients along each device's order. An F&B's forward
// starts keeping its activations before its backward frees the other's: +1 first, then -1
// (the README's p + 1).
void countDualInFlight(const std::vector<PipelineEvent>& order, const DualProgress& pr,
                       PipelineResult& r)
{
    r.peakInFlight.assign(pr.end.size(), 0);
    r.peakWeightPending.assign(pr.end.size(), 0);
    for (std::size_t d = 0; d < pr.end.size(); ++d) {
        int held = 0;
        int owed = 0;
        const std::size_t first = d == 0 ? 0 : pr.end[d - 1];
        for (std::size_t i = first; i < pr.end[d]; ++i) {
            const PipelineEvent& e = order[i];
            held += e.pass == Pass::Forward || e.pass == Pass::ForwardBackward ? 1 : 0;
            r.peakInFlight[d] = std::max(r.peakInFlight[d], held);
            held -= e.pass == Pass::Backward || e.pass == Pass::ForwardBackward ? 1 : 0;
            owed += e.pass == Pass::Backward && !e.withWeight ? 1 : 0;
            owed -= e.pass == Pass::Weight ? 1 : 0;
            r.peakWeightPending[d] = std::max(r.peakWeightPending[d], owed);
        }
    }
    r.peakActivations.assign(r.peakInFlight.begin(), r.peakInFlight.end());
}

} // namespace

std::vector<PipelineEvent> dualPipeOrder(const PipelineInputs& in)
{
    const DualShape sh = dualShapeOf(in);
    std::vector<PipelineEvent> order;
    // F, B and W of every (microbatch, stage) at most, fewer where they pair up into F&B.
    order.reserve(3 * static_cast<std::size_t>(sh.m) * static_cast<std::size_t>(sh.p));
    for (int d = 0; d < sh.devices; ++d)
        appendDevice(order, sh, d);
    return order;
}

PipelineResult simulateDualOrder(const PipelineInputs& in, std::vector<PipelineEvent> order)
{
    const DualShape sh = dualShapeOf(in);
    const auto cells = static_cast<std::size_t>(sh.m) * static_cast<std::size_t>(sh.p);
    DualProgress pr{std::vector<double>(cells, -1.0),
                    std::vector<double>(cells, -1.0),
                    {},
                    {},
                    std::vector<double>(static_cast<std::size_t>(sh.devices), 0.0)};
    checkDualOrder(sh, order, pr);
    const std::vector<double> freeAt = runDual(in, sh, order, pr);

    PipelineResult r;
    r.devices = sh.devices;
    r.parametersPerDevice = 2.0; // stages i and p-1-i
    r.makespan = *std::max_element(freeAt.begin(), freeAt.end());
    // Every device runs the F, B and W of p m / devices (microbatch, stage) pairs.
    const double step = in.forwardTime + in.backwardTime + in.weightTime;
    const double deviceWork = static_cast<double>(sh.m) * (sh.mirrored ? 1.0 : 2.0) * step;
    const double busy = static_cast<double>(sh.devices) * deviceWork;
    const double idle = dualPipeBubbleTime(in);
    r.bubbleFraction = idle / (idle + deviceWork);
    r.bubbleOverIdeal = idle / deviceWork;
    const double capacity = static_cast<double>(sh.devices) * r.makespan;
    r.simulatedBubbleFraction = std::max(0.0, (capacity - busy) / capacity);
    r.simulatedBubbleOverIdeal = std::max(0.0, (capacity - busy) / busy);
    for (std::size_t d = 0; d < pr.end.size(); ++d) {
        const std::size_t first = d == 0 ? 0 : pr.end[d - 1];
        if (pr.end[d] > first)
            r.bubbleTime =
                std::max(r.bubbleTime, order[pr.end[d] - 1].end - order[first].start - deviceWork);
    }
    r.bubbleRate = r.bubbleTime / deviceWork;
    countDualInFlight(order, pr, r);
    r.events = std::move(order);
    return r;
}

} // namespace scalelab::core::detail
