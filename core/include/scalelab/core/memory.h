#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace scalelab::core {

/// Inputs of the memory budget (scenario section `memory`). Byte sizes are per parameter or per
/// saved value.
struct MemoryInputs {
    std::int64_t parameters = 7'000'000'000; ///< P
    std::int64_t weightBytes = 2; ///< bf16 weights
    std::int64_t gradBytes = 2; ///< bf16 gradients
    std::int64_t masterBytes = 4; ///< fp32 master weights
    std::int64_t momentBytes = 8; ///< both fp32 Adam moments together
    std::int64_t tokens = 4096; ///< B x T, tokens in the batch
    std::int64_t hidden = 4096; ///< d
    std::int64_t layers = 32; ///< L
    std::int64_t bytesPerValue = 2;
    std::int64_t tensorsPerLayer = 16; ///< saved tokens x hidden tensors per layer
    std::int64_t segments = 8; ///< checkpoint segments, 1..layers

    bool operator==(const MemoryInputs&) const = default;
};

struct MemoryResult {
    std::int64_t weightBytes = 0; ///< P x weight bytes, and likewise below
    std::int64_t gradBytes = 0;
    std::int64_t masterBytes = 0;
    std::int64_t momentBytes = 0;
    std::int64_t modelStateBytes = 0; ///< the sum of the four above
    std::int64_t activationBytes = 0; ///< every layer's tensors saved
    std::int64_t checkpointedActivationBytes = 0; ///< with `segments` checkpoint segments
    std::int64_t optimalSegments = 1; ///< segments minimising the checkpointed bytes
    std::int64_t optimalCheckpointedBytes = 0; ///< the checkpointed bytes at optimalSegments
    std::int64_t recomputedLayers = 0; ///< layers run forward a second time during backward
    double recomputeFraction = 0.0; ///< recomputedLayers / layers: extra share of one forward
};

/// Throws InputError naming the field (`memory.segments`, ...).
void validate(const MemoryInputs& in);

/// Model-state bytes of Adam: P (weight + grad + master + moments), 16 P for mixed precision.
std::int64_t adamMemoryBytes(std::int64_t parameters, std::int64_t weightBytes = 2,
                             std::int64_t gradBytes = 2, std::int64_t masterBytes = 4,
                             std::int64_t momentBytes = 8);

/// Saved activations without checkpointing: tokens x hidden x layers x bytes x tensors.
std::int64_t activationMemoryBytes(std::int64_t tokens, std::int64_t hidden, std::int64_t layers,
                                   std::int64_t bytesPerValue = 2,
                                   std::int64_t tensorsPerLayer = 1);

/// With checkpointing: one boundary tensor per segment, plus the one segment being recomputed
/// holding all its tensors: tokens x hidden x bytes x (segments + ceil(layers/segments) x tensors).
std::int64_t checkpointedActivationBytes(std::int64_t tokens, std::int64_t hidden,
                                         std::int64_t layers, std::int64_t segments,
                                         std::int64_t bytesPerValue = 2,
                                         std::int64_t tensorsPerLayer = 1);

/// The segment counts a chart of 1..layers plots: every count up to `denseUpTo`, then evenly
/// spaced counts (about `spaced` of them) up to `layers`, plus each of `marks` (the choice, the
/// optimum) that lies in 1..layers; ascending, without repeats. At most denseUpTo + spaced + 1 +
/// marks.size() counts whatever `layers` is, so a model of 10^8 layers draws as fast as one of
/// 10^3.
std::vector<std::int64_t> segmentCountsToPlot(std::int64_t layers,
                                              std::initializer_list<std::int64_t> marks,
                                              std::int64_t denseUpTo = 1024,
                                              std::int64_t spaced = 1024);

/// The segment count in 1..layers with the fewest checkpointed bytes (the smallest on a tie).
std::int64_t optimalSegments(std::int64_t layers, std::int64_t tensorsPerLayer = 1);

/// Layers that backward runs forward again. With one saved tensor per layer (the chapter's
/// model) a segment replays from its saved input to rebuild its other layers' outputs, so
/// layers - segments; with several tensors per layer only the boundary of each layer is kept and
/// every layer is replayed to rebuild its interior tensors, so all layers.
std::int64_t recomputedLayers(std::int64_t layers, std::int64_t segments,
                              std::int64_t tensorsPerLayer = 1);

/// Everything the memory tab and report show. Validates first.
MemoryResult computeMemory(const MemoryInputs& in);

} // namespace scalelab::core
