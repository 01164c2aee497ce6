#include "scalelab/core/error.h"

#include <bit>
#include <cstdint>
#include <utility>

namespace scalelab::core {

InputError::InputError(std::string field, const std::string& expected)
    : std::invalid_argument(field + ": " + expected)
    , m_field(std::move(field))
    , m_expected(expected)
{
}

InputError InputError::problem(std::string field, const std::string& problem)
{
    InputError error(std::move(field), problem);
    error.m_isExpectation = false;
    return error;
}

const char* Stopped::what() const noexcept
{
    return "stopped: a newer request took its place";
}

void throwIfStopAsked(StopFlag flag)
{
    if (stopAsked(flag))
        throw Stopped();
}

void require(bool ok, std::string_view field, std::string_view expected)
{
    if (!ok)
        throw InputError(std::string(field), std::string(expected));
}

std::int64_t checkedMul(std::int64_t a, std::int64_t b, std::string_view field)
{
    std::int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out))
        throw InputError::problem(std::string(field),
                                  "too large: the byte count it gives passes 2^63");
    return out;
}

std::int64_t checkedAdd(std::int64_t a, std::int64_t b, std::string_view field)
{
    std::int64_t out = 0;
    if (__builtin_add_overflow(a, b, &out))
        throw InputError::problem(std::string(field),
                                  "too large: the byte count it gives passes 2^63");
    return out;
}

namespace {

/// gcd(|a|, |b|) by Stein's binary method: shifts and subtractions where Euclid divides, several
/// times faster for the byte counts of a plan (makeRatio runs for every candidate of a search).
std::int64_t binaryGcd(std::int64_t a, std::int64_t b)
{
    // Magnitudes as unsigned, so that |INT64_MIN| is representable.
    std::uint64_t u = a < 0 ? 0 - static_cast<std::uint64_t>(a) : static_cast<std::uint64_t>(a);
    std::uint64_t v = b < 0 ? 0 - static_cast<std::uint64_t>(b) : static_cast<std::uint64_t>(b);
    if (u == 0 || v == 0)
        return static_cast<std::int64_t>(u | v);
    const int shift = std::countr_zero(u | v);
    u >>= std::countr_zero(u);
    do {
        v >>= std::countr_zero(v);
        if (u > v)
            std::swap(u, v);
        v -= u;
    } while (v != 0);
    return static_cast<std::int64_t>(u << shift);
}

} // namespace

Ratio makeRatio(std::int64_t numerator, std::int64_t denominator)
{
    if (denominator == 1)
        return {numerator, 1}; // most byte counts are whole: no gcd, no division
    const std::int64_t g = binaryGcd(numerator, denominator);
    if (g == 0)
        return {0, 1};
    return {numerator / g, denominator / g};
}

} // namespace scalelab::core
