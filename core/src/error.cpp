#include "scalelab/core/error.h"

#include <cstdint>
#include <numeric>

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

void require(bool ok, const std::string& field, const std::string& expected)
{
    if (!ok)
        throw InputError(field, expected);
}

std::int64_t checkedMul(std::int64_t a, std::int64_t b, const std::string& field)
{
    std::int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out))
        throw InputError::problem(field, "too large: the byte count it gives passes 2^63");
    return out;
}

std::int64_t checkedAdd(std::int64_t a, std::int64_t b, const std::string& field)
{
    std::int64_t out = 0;
    if (__builtin_add_overflow(a, b, &out))
        throw InputError::problem(field, "too large: the byte count it gives passes 2^63");
    return out;
}

Ratio makeRatio(std::int64_t numerator, std::int64_t denominator)
{
    const std::int64_t g = std::gcd(numerator, denominator);
    if (g == 0)
        return {0, 1};
    return {numerator / g, denominator / g};
}

} // namespace scalelab::core
