// The FP8 tab's inputs: the format, the block size, the generated matrix and the block drawn.

#include "fields.h"

#include <QtGlobal>
#include <algorithm>

namespace scalelab::document::detail {

using core::Scenario;

void addFp8Fields(std::vector<Field>& out)
{
    constexpr auto S = core::Section::Fp8;
    {
        Field f = bound<&Scenario::fp8, &core::Fp8Inputs::format>(choiceField(S, "fp8.format", QT_TRANSLATE_NOOP("Field", "&Format"), QT_TRANSLATE_NOOP("Field", "E4M3 has more precision, E5M2 more range."),
            {"e4m3", "e5m2"},
            {QT_TRANSLATE_NOOP("Field", "E4M3 (max 448)"), QT_TRANSLATE_NOOP("Field", "E5M2 (max 57344)")}));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::fp8, &core::Fp8Inputs::blockSize>(numberField(S, "fp8.block_size", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Block size"), {}, QT_TRANSLATE_NOOP("Field", "columns"),
            QT_TRANSLATE_NOOP("Field", "Columns per 1 x n block that shares one scale; divides the columns."), 1, 4096, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::fp8, &core::Fp8Inputs::rows>(numberField(S, "fp8.rows", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Rows"), {}, QT_TRANSLATE_NOOP("Field", "rows"),
            QT_TRANSLATE_NOOP("Field", "Rows of the generated matrix."), 1, 4096, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::fp8, &core::Fp8Inputs::cols>(numberField(S, "fp8.cols", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "&Columns"), {}, QT_TRANSLATE_NOOP("Field", "columns"),
            QT_TRANSLATE_NOOP("Field", "Columns of the generated matrix; the block size must divide them."), 1, 4096, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::fp8, &core::Fp8Inputs::outlierScale>(numberField(S, "fp8.outlier_scale", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "&Outlier scale"), {}, QT_TRANSLATE_NOOP("Field", "x"),
            QT_TRANSLATE_NOOP("Field", "How many times larger the few outlier blocks are (about 1 block in 16) than the standard-normal rest."), 1, 1e12, true));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::fp8, &core::Fp8Inputs::seed>(numberField(S, "fp8.seed", FieldKind::Whole, QT_TRANSLATE_NOOP("Field", "S&eed"), {}, "",
            QT_TRANSLATE_NOOP("Field", "Seed of the random matrix and of which blocks are outliers."), 0, 1000));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::fp8, &core::Fp8Inputs::overflow>(choiceField(S, "fp8.overflow", QT_TRANSLATE_NOOP("Field", "O&verflow"), QT_TRANSLATE_NOOP("Field", "What a value beyond the format's largest becomes."),
            {"saturate", "nan"},
            {QT_TRANSLATE_NOOP("Field", "Saturate to \u00b1max"), QT_TRANSLATE_NOOP("Field", "NaN (non-saturating)")}));
        out.push_back(std::move(f));
    }
    {
        Field f = bound<&Scenario::fp8Display, &core::Fp8Display::shownBlock>(numberField(S, "fp8.shown_block", FieldKind::Number, QT_TRANSLATE_NOOP("Field", "Block &shown"), {}, QT_TRANSLATE_NOOP("Field", "% smaller"),
            QT_TRANSLATE_NOOP("Field", "The block the grid chart shows and the error chart rings: this percentage of the blocks have a smaller largest |value| (50 % = the median block)."), 0, 100));
        out.push_back(std::move(f));
    }
}

void normalizeFp8(const core::Scenario&, core::Scenario&, const Field*) {}

} // namespace scalelab::document::detail
