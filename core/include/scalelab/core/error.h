#pragma once

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace scalelab::core {

/// The one exception type for bad input. `field()` is the JSON path of the offending value, as
/// the scenario file spells it (`pipeline.microbatches`, `experts.assignments[0][2]`); `what()`
/// is "<field>: <what was expected>".
class InputError : public std::invalid_argument {
public:
    InputError(std::string field, const std::string& expected);

    /// An error that is not put as what was expected ("too large: ...", "no such file"): error
    /// lines print it as it stands, without "expected".
    static InputError problem(std::string field, const std::string& problem);

    const std::string& field() const noexcept { return m_field; }
    /// What was expected, without the field name; for a problem(), the problem.
    const std::string& expected() const noexcept { return m_expected; }
    /// False for a problem().
    bool isExpectation() const noexcept { return m_isExpectation; }

private:
    std::string m_field;
    std::string m_expected;
    bool m_isExpectation = true;
};

/// Thrown by a long computation that was asked to stop part way (a newer request superseded
/// it). Not an error: whoever asked drops the result, and nothing the computation wrote into a
/// cache is read before it is written again.
class Stopped : public std::exception {
public:
    const char* what() const noexcept override;
};

/// A flag a long computation reads between pieces of its work; null never asks it to stop.
using StopFlag = const std::atomic<bool>*;

/// Whether `flag` asks the computation reading it to stop (a relaxed read: it only decides
/// when to give up, and no data passes through it).
inline bool stopAsked(StopFlag flag) noexcept
{
    return flag && flag->load(std::memory_order_relaxed);
}

/// Throws Stopped when `flag` asks to stop.
void throwIfStopAsked(StopFlag flag);

/// Throws InputError(field, expected) unless `ok`. The texts are views, made into strings only
/// on the throw: the checks run in every candidate of the layout search, and a literal passed as
/// a std::string cost a heap allocation each time.
void require(bool ok, std::string_view field, std::string_view expected);

/// a * b, or InputError(field, "...too large...") when the product leaves the int64 range.
std::int64_t checkedMul(std::int64_t a, std::int64_t b, std::string_view field);
/// a + b, or InputError(field, "...too large...") when the sum leaves the int64 range.
std::int64_t checkedAdd(std::int64_t a, std::int64_t b, std::string_view field);

/// An exact non-negative ratio of byte counts: `numerator / denominator`, reduced. A byte figure
/// such as P*o/n is whole or not depending on the inputs; the report prints it as an integer
/// exactly when it is whole.
struct Ratio {
    std::int64_t numerator = 0;
    std::int64_t denominator = 1;

    bool isWhole() const noexcept { return denominator == 1; }
    double value() const noexcept
    {
        return static_cast<double>(numerator) / static_cast<double>(denominator);
    }
    friend bool operator==(const Ratio&, const Ratio&) = default;
};

/// numerator / denominator reduced by their greatest common divisor; denominator > 0.
Ratio makeRatio(std::int64_t numerator, std::int64_t denominator);

} // namespace scalelab::core
