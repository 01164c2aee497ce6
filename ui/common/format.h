#pragma once

#include <QString>
#include <cstdint>

namespace scalelab::ui {

/// How byte figures are shown: decimal GB (10^9) or binary GiB (2^30). Every label says which.
enum class ByteUnit { GB, GiB };

/// Bytes per unit: 1e9 or 2^30.
double bytesPerUnit(ByteUnit unit);
/// "GB" or "GiB".
QString unitName(ByteUnit unit);
/// `bytes` in the unit with three significant digits and the unit: "112 GB", "2.42 GiB",
/// "0.000512 GB"; whole byte counts below 10 kB are written out: "3,072 bytes".
QString formatBytes(double bytes, ByteUnit unit);
/// A count with three significant digits, in words past a million: "7.00 billion", "4100".
QString formatCount(double count);
/// An integer with thousands separators: "16,000,000".
QString formatWhole(std::int64_t value);
/// The n to hand tr() for choosing a plural form of count `n`: `n` itself, or, past a million,
/// a number with the same last six digits (all that plural rules read), which fits an int.
int pluralChoice(std::int64_t n);
/// A count and its noun in the right number: `numerusText` is what tr("%1 slot(s)", nullptr,
/// pluralChoice(n)) returned, %1 standing for the count, which is filled in as formatWhole
/// writes it. A translation gives its own plural forms; without one tr() returns the English
/// source, whose "(s)" is resolved here: "1 slot", "0 slots", "4,096 slots".
QString countText(const QString& numerusText, std::int64_t n);
/// A number with `digits` significant digits, without trailing exponent noise: "0.2", "1.5e-06".
QString formatNumber(double value, int digits = 3);

} // namespace scalelab::ui
