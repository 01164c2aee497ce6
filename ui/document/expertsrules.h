#pragma once

// The experts section's ranges that follow other inputs, shared by its field table
// (fields_experts.cpp: maximumFrom and normalizeExperts) and its view. Qt-free.

#include "scalelab/core/experts.h"

#include <algorithm>
#include <cstdint>

namespace scalelab::document::experts {

// Slider ends; a scenario file may ask for more, and then the slider widens.
inline constexpr std::int64_t kRanksSlider = 64;
inline constexpr std::int64_t kExpertsSlider = 256;
inline constexpr std::int64_t kTopKSlider = 8;
inline constexpr std::int64_t kTokensSlider = 1'000'000;

/// The factor the capacity slider shows while the limit is off (capacity_factor 0), and the
/// one the limit starts at when the check box turns it on.
inline constexpr double kUnlimitedShownFactor = 1.25;

/// Largest multiple of `ranks` the experts slider offers (at least `ranks` itself).
inline std::int64_t expertsMaximum(std::int64_t ranks)
{
    ranks = std::max<std::int64_t>(ranks, 1);
    return std::max(ranks, kExpertsSlider / ranks * ranks);
}

/// Most experts per token the top-k slider offers: every expert, at most kTopKSlider.
inline std::int64_t topKMaximum(std::int64_t experts)
{
    return std::clamp<std::int64_t>(experts, 1, kTopKSlider);
}

/// Most tokens per rank the router accepts with these ranks and top-k (core's slot limit), at
/// most kTokensSlider.
inline std::int64_t tokensMaximum(std::int64_t ranks, std::int64_t topK)
{
    ranks = std::max<std::int64_t>(ranks, 1);
    topK = std::max<std::int64_t>(topK, 1);
    if (ranks > core::kMaxRoutedSlots / topK) // a file's product past the limit, or past int64
        return 1;
    const std::int64_t perToken = ranks * topK;
    return std::clamp(core::kMaxRoutedSlots / perToken, std::int64_t{1}, kTokensSlider);
}

} // namespace scalelab::document::experts
