#include "scalelab/core/memory.h"

#include "scalelab/core/error.h"

#include <algorithm>
#include <string>

namespace scalelab::core {

namespace {

std::int64_t ceilDiv(std::int64_t a, std::int64_t b)
{
    return (a + b - 1) / b;
}

} // namespace

void validate(const MemoryInputs& in)
{
    require(in.parameters >= 1, "memory.parameters", "a whole number >= 1");
    require(in.weightBytes >= 0, "memory.weight_bytes", "a whole number >= 0");
    require(in.gradBytes >= 0, "memory.grad_bytes", "a whole number >= 0");
    require(in.masterBytes >= 0, "memory.master_bytes", "a whole number >= 0");
    require(in.momentBytes >= 0, "memory.moment_bytes", "a whole number >= 0");
    require(in.tokens >= 1, "memory.tokens", "a whole number >= 1");
    require(in.hidden >= 1, "memory.hidden", "a whole number >= 1");
    require(in.layers >= 1, "memory.layers", "a whole number >= 1");
    require(in.bytesPerValue >= 1, "memory.bytes_per_value", "a whole number >= 1");
    require(in.tensorsPerLayer >= 1, "memory.tensors_per_layer", "a whole number >= 1");
    require(in.segments >= 1 && in.segments <= in.layers, "memory.segments",
            "a whole number in 1..layers (1.." + std::to_string(in.layers) + ")");
    // Every figure must fit in 64 bits; the checked helpers below name the field otherwise.
    (void)adamMemoryBytes(in.parameters, in.weightBytes, in.gradBytes, in.masterBytes,
                          in.momentBytes);
    (void)activationMemoryBytes(in.tokens, in.hidden, in.layers, in.bytesPerValue,
                                in.tensorsPerLayer);
}

std::int64_t adamMemoryBytes(std::int64_t parameters, std::int64_t weightBytes,
                             std::int64_t gradBytes, std::int64_t masterBytes,
                             std::int64_t momentBytes)
{
    // The chapter's (41.1): 2 + 2 + 4 + 4 + 4 = 16 bytes per parameter for mixed-precision Adam.
    const std::string field = "memory.parameters";
    std::int64_t perParameter = checkedAdd(weightBytes, gradBytes, field);
    perParameter = checkedAdd(perParameter, masterBytes, field);
    perParameter = checkedAdd(perParameter, momentBytes, field);
    return checkedMul(parameters, perParameter, field);
}

std::int64_t activationMemoryBytes(std::int64_t tokens, std::int64_t hidden, std::int64_t layers,
                                   std::int64_t bytesPerValue, std::int64_t tensorsPerLayer)
{
    // Saved activations: B T d L values, times bytes per value and tensors saved per layer.
    const std::string field = "memory.tokens";
    std::int64_t bytes = checkedMul(tokens, hidden, field);
    bytes = checkedMul(bytes, layers, field);
    bytes = checkedMul(bytes, bytesPerValue, field);
    return checkedMul(bytes, tensorsPerLayer, field);
}

std::int64_t checkpointedActivationBytes(std::int64_t tokens, std::int64_t hidden,
                                         std::int64_t layers, std::int64_t segments,
                                         std::int64_t bytesPerValue, std::int64_t tensorsPerLayer)
{
    // Boundaries keep one tensor each; the segment under recomputation keeps all its tensors.
    const std::string field = "memory.tokens";
    const std::int64_t savedTensors =
        checkedAdd(segments, checkedMul(ceilDiv(layers, segments), tensorsPerLayer, field), field);
    std::int64_t bytes = checkedMul(tokens, hidden, field);
    bytes = checkedMul(bytes, bytesPerValue, field);
    return checkedMul(bytes, savedTensors, field);
}

std::int64_t optimalSegments(std::int64_t layers, std::int64_t tensorsPerLayer)
{
    // segments + ceil(L/segments) * t is smallest near sqrt(L t). ceil(L/s) takes only
    // O(sqrt(L)) distinct values, so walk the runs of equal ceil(L/s): within a run the smallest
    // s is best. That keeps this exact and fast even for absurd layer counts.
    std::int64_t best = 1;
    std::int64_t bestCost = -1;
    std::int64_t s = 1;
    while (s <= layers) {
        const std::int64_t q = ceilDiv(layers, s);
        const std::int64_t cost = s + q * tensorsPerLayer;
        if (bestCost < 0 || cost < bestCost) {
            best = s;
            bestCost = cost;
        }
        if (q == 1)
            break;
        // The largest s' with ceil(L/s') == q is floor((L-1)/(q-1)); the next run starts after.
        s = (layers - 1) / (q - 1) + 1;
    }
    return best;
}

std::int64_t recomputedLayers(std::int64_t layers, std::int64_t segments,
                              std::int64_t tensorsPerLayer)
{
    if (tensorsPerLayer == 1)
        return layers - segments;
    return layers;
}

MemoryResult computeMemory(const MemoryInputs& in)
{
    validate(in);
    MemoryResult r;
    const std::string field = "memory.parameters";
    r.weightBytes = checkedMul(in.parameters, in.weightBytes, field);
    r.gradBytes = checkedMul(in.parameters, in.gradBytes, field);
    r.masterBytes = checkedMul(in.parameters, in.masterBytes, field);
    r.momentBytes = checkedMul(in.parameters, in.momentBytes, field);
    r.modelStateBytes = adamMemoryBytes(in.parameters, in.weightBytes, in.gradBytes, in.masterBytes,
                                        in.momentBytes);
    r.activationBytes = activationMemoryBytes(in.tokens, in.hidden, in.layers, in.bytesPerValue,
                                              in.tensorsPerLayer);
    r.checkpointedActivationBytes = checkpointedActivationBytes(
        in.tokens, in.hidden, in.layers, in.segments, in.bytesPerValue, in.tensorsPerLayer);
    r.optimalSegments = optimalSegments(in.layers, in.tensorsPerLayer);
    r.optimalCheckpointedBytes = checkpointedActivationBytes(
        in.tokens, in.hidden, in.layers, r.optimalSegments, in.bytesPerValue, in.tensorsPerLayer);
    r.recomputedLayers = recomputedLayers(in.layers, in.segments, in.tensorsPerLayer);
    r.recomputeFraction = static_cast<double>(r.recomputedLayers) / static_cast<double>(in.layers);
    return r;
}

std::vector<std::int64_t> segmentCountsToPlot(std::int64_t layers,
                                              std::initializer_list<std::int64_t> marks,
                                              std::int64_t denseUpTo, std::int64_t spaced)
{
    std::vector<std::int64_t> counts;
    const std::int64_t dense = std::min(layers, std::max<std::int64_t>(denseUpTo, 1));
    for (std::int64_t s = 1; s <= dense; ++s)
        counts.push_back(s);
    if (layers > dense) {
        // k / spaced of the way from `dense` to `layers`; the last one is `layers` itself.
        const std::int64_t steps = std::max<std::int64_t>(spaced, 1);
        const auto span = static_cast<long double>(layers - dense);
        for (std::int64_t k = 1; k <= steps; ++k) {
            const auto offset = static_cast<std::int64_t>(span * k / steps);
            counts.push_back(std::clamp<std::int64_t>(dense + offset, dense + 1, layers));
        }
    }
    for (const std::int64_t mark : marks)
        if (mark >= 1 && mark <= layers)
            counts.push_back(mark);
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    return counts;
}

} // namespace scalelab::core
