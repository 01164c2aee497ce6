#include "format.h"

#include <QLocale>
#include <cmath>

namespace scalelab::ui {

double bytesPerUnit(ByteUnit unit)
{
    return unit == ByteUnit::GB ? 1e9 : 1073741824.0;
}

QString unitName(ByteUnit unit)
{
    return unit == ByteUnit::GB ? "GB" : "GiB";
}

QString formatNumber(double value, int digits)
{
    if (value == 0.0)
        return "0";
    const double magnitude = std::abs(value);
    if (magnitude >= 1e-3 && magnitude < 1e6) {
        // Fixed notation with `digits` significant digits.
        const int decimals =
            std::max(0, digits - 1 - static_cast<int>(std::floor(std::log10(magnitude))));
        QString text = QString::number(value, 'f', decimals);
        // "16.0" reads as a measurement; the figures here are exact, so "16".
        if (text.contains('.')) {
            while (text.endsWith('0'))
                text.chop(1);
            if (text.endsWith('.'))
                text.chop(1);
        }
        return text;
    }
    return QString::number(value, 'g', digits);
}

QString formatWhole(std::int64_t value)
{
    QLocale c = QLocale::c();
    c.setNumberOptions(QLocale::DefaultNumberOptions);
    return c.toString(static_cast<qlonglong>(value));
}

int pluralChoice(std::int64_t n)
{
    constexpr std::int64_t kMillion = 1'000'000;
    return static_cast<int>(n <= kMillion ? n : kMillion + n % kMillion);
}

QString countText(const QString& numerusText, std::int64_t n)
{
    QString text = numerusText;
    text.replace(QLatin1String("(s)"), n == 1 ? QString() : QStringLiteral("s"));
    return text.arg(formatWhole(n));
}

QString formatBytes(double bytes, ByteUnit unit)
{
    if (bytes < 10'000 && bytes == std::floor(bytes))
        return formatWhole(static_cast<std::int64_t>(bytes)) + " bytes";
    return formatNumber(bytes / bytesPerUnit(unit)) + ' ' + unitName(unit);
}

QString formatCount(double count)
{
    const struct {
        double scale;
        const char* suffix;
    } steps[] = {{1e12, "trillion"}, {1e9, "billion"}, {1e6, "million"}};
    for (const auto& s : steps)
        if (std::abs(count) >= s.scale)
            return formatNumber(count / s.scale) + ' ' + s.suffix;
    return formatNumber(count);
}

} // namespace scalelab::ui
