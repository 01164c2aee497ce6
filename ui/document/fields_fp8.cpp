// The FP8 tab's inputs: the format, the block size, the generated matrix and the block drawn.

#include "fields.h"
#include "scalelab/core/fp8_view.h"

#include <QtGlobal>
#include <algorithm>

namespace scalelab::document::detail {

using core::Scenario;

namespace {

constexpr auto S = core::Section::Fp8;

/// The FP8 format.
Field formatField()
{
    return bound<&Scenario::fp8, &core::Fp8Inputs::format>(choiceField(
        S, "fp8.format", QT_TRANSLATE_NOOP("Field", "&Format"),
        QT_TRANSLATE_NOOP("Field",
                          "E4M3: 3 mantissa bits, smallest normal 2^-6. E5M2: 2 mantissa bits, "
                          "smallest normal 2^-14 (a wider range, coarser steps)."),
        {"e4m3", "e5m2"},
        {QT_TRANSLATE_NOOP("Field", "E4M3 (max 448)"),
         QT_TRANSLATE_NOOP("Field", "E5M2 (max 57,344)")}));
}

/// Values per block; the tab offers the divisors of the columns.
Field blockSizeField()
{
    return bound<&Scenario::fp8, &core::Fp8Inputs::blockSize>(numberField(
        S, "fp8.block_size", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Block size"), {},
        QT_TRANSLATE_NOOP("Field", "columns"),
        QT_TRANSLATE_NOOP(
            "Field",
            "Values per block: each 1 x block_size block of a row gets its own scale, "
            "max|block| / max_value. Only sizes that divide the columns are offered."),
        1, 4096, true));
}

/// Rows of the generated matrix.
Field rowsField()
{
    return bound<&Scenario::fp8, &core::Fp8Inputs::rows>(
        numberField(S, "fp8.rows", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Rows"), {},
                    QT_TRANSLATE_NOOP("Field", "rows"),
                    QT_TRANSLATE_NOOP("Field", "Rows of the generated matrix."), 1, 4096, true));
}

/// Columns of the generated matrix.
Field colsField()
{
    return bound<&Scenario::fp8, &core::Fp8Inputs::cols>(numberField(
        S, "fp8.cols", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Columns"), {},
        QT_TRANSLATE_NOOP("Field", "columns"),
        QT_TRANSLATE_NOOP("Field",
                          "Columns of the generated matrix; the block size must divide them."),
        1, 4096, true));
}

/// How much larger the outlier blocks are.
Field outlierScaleField()
{
    return bound<&Scenario::fp8, &core::Fp8Inputs::outlierScale>(numberField(
        S, "fp8.outlier_scale", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "&Outlier scale"), {},
        QT_TRANSLATE_NOOP("Field", "x"),
        QT_TRANSLATE_NOOP("Field",
                          "How many times larger the few outlier blocks are (about 1 block in "
                          "16) than the standard-normal rest."),
        1, 1e12, true));
}

/// The seed of the generated matrix.
Field seedField()
{
    return bound<&Scenario::fp8, &core::Fp8Inputs::seed>(numberField(
        S, "fp8.seed", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "S&eed"), {}, "",
        QT_TRANSLATE_NOOP("Field", "Seed of the random matrix and of which blocks are outliers."),
        0, 1000));
}

/// What a value past the largest finite one becomes (display: the plain-cast row).
Field overflowField()
{
    return bound<&Scenario::fp8, &core::Fp8Inputs::overflow>(
        choiceField(S, "fp8.overflow", QT_TRANSLATE_NOOP("Field", "O&verflow"),
                    QT_TRANSLATE_NOOP("Field",
                                      "What a value past the largest finite one becomes. A "
                                      "scale of max|tile| / max_value never lets one pass, so "
                                      "only the plain cast (no scale) shows the difference."),
                    {"saturate", "nan"},
                    {QT_TRANSLATE_NOOP("Field", "Saturate to \u00b1max"),
                     QT_TRANSLATE_NOOP("Field", "NaN (non-saturating)")}));
}

/// Which experiment the tab shows (display only).
Field partField()
{
    return bound<&Scenario::fp8Display, &core::Fp8Display::part>(choiceField(
        S, "fp8.part", QT_TRANSLATE_NOOP("Field", "Sho&w"),
        QT_TRANSLATE_NOOP("Field",
                          "Which part of FP8 training the charts show: the granularity of the "
                          "scales, how the products are added up, or when the scales are chosen."),
        {"blocks", "accumulation", "policy"},
        {QT_TRANSLATE_NOOP("Field", "Block scaling"), QT_TRANSLATE_NOOP("Field", "Accumulation"),
         QT_TRANSLATE_NOOP("Field", "Scaling over time")}));
}

/// The block the grid chart shows (display only).
Field shownBlockField()
{
    return bound<&Scenario::fp8Display, &core::Fp8Display::shownBlock>(numberField(
        S, "fp8.shown_block", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "Block &shown"), {},
        QT_TRANSLATE_NOOP("Field", "% smaller"),
        QT_TRANSLATE_NOOP(
            "Field",
            "The block the grid chart shows and the error chart rings: this percentage of the "
            "blocks have a smaller largest |value| (50 % = the median block)."),
        0, 100));
}

} // namespace

void addFp8Fields(std::vector<Field>& out)
{
    out.push_back(formatField());
    out.push_back(blockSizeField());
    out.push_back(rowsField());
    out.push_back(colsField());
    out.push_back(outlierScaleField());
    out.push_back(seedField());
    out.push_back(overflowField());
    out.push_back(shownBlockField());
    out.push_back(partField());
}

namespace {

/// The columns a block size must divide: the explicit values' when there are some.
std::int64_t blockColumns(const core::Fp8Inputs& in)
{
    return in.values ? static_cast<std::int64_t>(in.values->cols()) : in.cols;
}

} // namespace

void normalizeFp8(const core::Scenario& before, core::Scenario& after, const Field* field)
{
    std::int64_t& preferred = after.fp8Display.preferredBlockSize;
    // A block size chosen (the combo box, a preset) is the choice: nothing is held back.
    if ((field && field->key == QLatin1String("fp8.block_size"))
        || after.fp8.blockSize != before.fp8.blockSize) {
        preferred = 0;
        return;
    }
    // The block size follows the columns: the largest divisor of theirs not above the size chosen
    // last, which is remembered while it does not fit, so passing through a prime column count
    // and back does not lose it. A size that fits nothing and was not moved (a file's) is kept,
    // for core to refuse by name.
    const std::int64_t cols = blockColumns(after.fp8);
    if (cols == blockColumns(before.fp8) || cols < 1)
        return;
    const std::int64_t wanted = preferred > 0 ? preferred : after.fp8.blockSize;
    after.fp8.blockSize = core::fp8BlockSizeFor(cols, wanted);
    preferred = after.fp8.blockSize == wanted ? 0 : wanted;
}

} // namespace scalelab::document::detail
