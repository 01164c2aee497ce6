#include "scalelab/core/fp8_view.h"

#include "scalelab/core/error.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

namespace scalelab::core {

namespace {

/// The generation keys of `a` and `b` are the same: the generated matrix would be too.
bool sameGeneration(const Fp8Inputs& a, const Fp8Inputs& b)
{
    return a.rows == b.rows && a.cols == b.cols && a.seed == b.seed && a.blockSize == b.blockSize
        && a.outlierScale == b.outlierScale;
}

/// Step 1: the matrix of the inputs and the blocks left out of the small-block figures. A
/// generated matrix is taken from `options.previous` when only the format, the overflow rule or
/// the shown block changed, else built from `options.normals` (or drawn).
std::shared_ptr<const MatrixF> takeMatrix(const Fp8Inputs& in, const Fp8ViewOptions& options,
                                          Fp8View& v)
{
    if (in.values)
        return std::make_shared<const MatrixF>(*in.values);
    const std::shared_ptr<const Fp8View>& previous = options.previous;
    if (previous && previous->generated && sameGeneration(previous->inputs, in)) {
        v.excluded = previous->excluded;
        v.normals = previous->normals;
        v.generated = previous->generated;
        return v.generated;
    }
    if (options.workspace) {
        // The workspace keeps the matrix for the next call; the view does not hold it, so that
        // an outlier change rewrites the outlier blocks of this one matrix in place instead of
        // filling a second 64 MB one (whose first touch alone costs about 100 ms).
        std::shared_ptr<const Fp8Generated> g = options.workspace->generate(in);
        v.excluded = g->outlierBlocks;
        v.normals = options.workspace->normals(in);
        return std::shared_ptr<const MatrixF>(g, &g->values); // shares g's ownership
    }
    if (!options.charts && !options.normals) {
        // Nothing to keep for a next call: the normal matrix becomes the generated one in place.
        Fp8Generated g = fp8Generate(in);
        v.excluded = std::move(g.outlierBlocks);
        return std::make_shared<const MatrixF>(std::move(g.values));
    }
    std::shared_ptr<const MatrixF> normals = options.normals;
    if (!normals)
        normals = std::make_shared<const MatrixF>(fp8NormalMatrix(in));
    Fp8Generated g = fp8ApplyOutliers(*normals, in);
    v.excluded = std::move(g.outlierBlocks);
    v.normals = std::move(normals);
    v.generated = std::make_shared<const MatrixF>(std::move(g.values));
    return v.generated;
}

/// Explicit values name no outliers: the blocks that hold the largest |value| play them.
std::vector<std::int64_t> largestBlocks(const MatrixF& values, std::int64_t b)
{
    std::vector<float> blockMax(static_cast<std::size_t>(values.size() / b), 0.0f);
    for (std::int64_t k = 0; k < values.size(); ++k) {
        float& m = blockMax[static_cast<std::size_t>(k / b)];
        m = std::max(m, std::abs(values.data()[k]));
    }
    const float top = *std::max_element(blockMax.begin(), blockMax.end());
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < blockMax.size(); ++i)
        if (blockMax[i] == top)
            out.push_back(static_cast<std::int64_t>(i));
    return out;
}

/// The table's round trips, one per row. Only the two the charts compare keep their matrices:
/// their scales, and their dequantized matrices when the charts need them (`charts`) or the
/// chapter's is printed (`explicitValues`).
std::vector<Fp8ScalingJob> tableJobs(std::int64_t b, bool charts, bool explicitValues)
{
    return {
        {{0, 0, false}, true, false, false}, // kFp8CastRow
        {{0, 0, false}, false, true, charts}, // kFp8TensorRow
        {{1, 0, false}, false, false, false}, // kFp8PerRowRow
        {{1, 128, false}, false, false, false}, // kFp8Tile128Row
        {{128, 128, false}, false, false, false}, // kFp8Block128Row
        {{1, b, false}, false, true, charts || explicitValues}, // kFp8ChapterRow
        {{1, 32, true}, false, false, false}, // kFp8MxRow
    };
}

/// How tiles of `s` cut a rows x cols matrix: clipped to the matrix, the last ones shorter.
Fp8Tiling tiling(const Fp8Scaling& s, std::int64_t rows, std::int64_t cols)
{
    Fp8Tiling t;
    t.wantRows = s.blockRows == 0 ? rows : s.blockRows;
    t.wantCols = s.blockCols == 0 ? cols : s.blockCols;
    t.tileRows = std::min(t.wantRows, rows);
    t.tileCols = std::min(t.wantCols, cols);
    t.edgeRows = rows % t.tileRows == 0 ? t.tileRows : rows % t.tileRows;
    t.edgeCols = cols % t.tileCols == 0 ? t.tileCols : cols % t.tileCols;
    t.even = rows % t.tileRows == 0 && cols % t.tileCols == 0 && t.tileRows == t.wantRows
        && t.tileCols == t.wantCols;
    return t;
}

/// The outcomes of the table's round trips: held here, or in a workspace.
struct TableOutcomes {
    std::vector<Fp8ScalingOutcome> own;
    const std::vector<Fp8ScalingOutcome>* done = nullptr; ///< own, or the workspace's
    std::vector<int> slot; ///< per table row, its index in *done, or -1 when not computed

    const Fp8ScalingOutcome& operator[](int row) const
    {
        return (*done)[static_cast<std::size_t>(slot[static_cast<std::size_t>(row)])];
    }
};

/// Whether table row `row` is computed: every row, or the two compared ones alone (the
/// report's); the others are left default.
bool rowAsked(bool wholeTable, std::size_t row)
{
    return wholeTable || row == kFp8TensorRow || row == kFp8ChapterRow;
}

/// Step 2: every granularity of the table in one call (the round trips run side by side).
/// With `charts` the two compared outcomes still hold their dequantized matrices.
void fillTable(const MatrixF& values, const Fp8Inputs& in, const Fp8ViewOptions& options,
               Fp8View& v, TableOutcomes& out)
{
    const std::vector<Fp8ScalingJob> jobs =
        tableJobs(in.blockSize, options.charts, in.values.has_value());
    // Every row, or the two compared ones alone (the report's), left in their places.
    std::vector<Fp8ScalingJob> asked;
    out.slot.assign(jobs.size(), -1);
    for (std::size_t i = 0; i < jobs.size(); ++i)
        if (rowAsked(options.wholeTable, i)) {
            out.slot[i] = static_cast<int>(asked.size());
            asked.push_back(jobs[i]);
        }
    // The small blocks' figures belong to the table; the report's two rows go without them.
    const std::vector<std::int64_t> none;
    const std::vector<std::int64_t>& excluded = options.wholeTable ? v.excluded : none;
    if (options.workspace) {
        out.done = &options.workspace->quantizeScalings(values, in.format, in.overflow, asked,
                                                        in.blockSize, excluded, options.stop);
    } else {
        out.own =
            fp8QuantizeScalings(values, in.format, in.overflow, asked, in.blockSize, excluded);
        out.done = &out.own;
    }
    v.table.resize(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (out.slot[i] < 0)
            continue;
        const Fp8ScalingOutcome& o = out[static_cast<int>(i)];
        Fp8Granularity& g = v.table[i];
        g.scaling = jobs[i].scaling;
        g.plainCast = jobs[i].plainCast;
        g.scales = g.plainCast ? 0 : o.scaleCount;
        if (!g.plainCast)
            g.tiling = tiling(jobs[i].scaling, values.rows(), values.cols());
        g.all = o.all;
        g.small = o.small;
    }
    v.tensorScale = out[kFp8TensorRow].scales(0, 0);
    if (out.done == &out.own)
        v.blockScales =
            std::move(out.own[static_cast<std::size_t>(out.slot[kFp8ChapterRow])].scales);
    else
        v.blockScales = out[kFp8ChapterRow].scales;
    if (in.values)
        v.blockDequantized = out[kFp8ChapterRow].dequantized;
}

/// The per-block errors of the two compared round trips.
struct BlockErrors {
    const std::vector<Fp8BlockError>* tensor = nullptr; ///< ownTensor, or a workspace's
    const std::vector<Fp8BlockError>* block = nullptr; ///< ownBlock, or a workspace's
    std::vector<Fp8BlockError> ownTensor, ownBlock;
    /// Block indices by magnitude, smallest first (Fp8View::order).
    std::shared_ptr<const std::vector<std::int64_t>> order;
};

/// Step 3: the per-block errors and the error maps of both compared scalings.
void blockErrorsAndMaps(const MatrixF& values, const MatrixF& tensorDeq, const MatrixF& blockDeq,
                        const Fp8ViewOptions& options, Fp8View& v, BlockErrors& e)
{
    const std::int64_t b = v.inputs.blockSize;
    const std::int64_t side = options.mapSide;
    // One pass over each pair of matrices, on every core; a workspace keeps the block lists'
    // memory for the next call. Without maps, the block errors alone.
    if (side == 0) {
        e.ownTensor = fp8BlockErrors(values, tensorDeq, b);
        e.ownBlock = fp8BlockErrors(values, blockDeq, b);
        e.tensor = &e.ownTensor;
        e.block = &e.ownBlock;
    } else if (options.workspace) {
        options.workspace->errorPictures(values, tensorDeq, blockDeq, b, side, side, options.stop);
        Fp8ErrorPicture& tensor = options.workspace->picture(0);
        Fp8ErrorPicture& block = options.workspace->picture(1);
        e.tensor = &tensor.blocks;
        e.block = &block.blocks;
        v.tensorMap = std::make_shared<const Eigen::MatrixXd>(std::move(tensor.map));
        v.blockMap = std::make_shared<const Eigen::MatrixXd>(std::move(block.map));
    } else {
        Fp8ErrorPicture tensor = fp8ErrorPicture(values, tensorDeq, b, side, side);
        Fp8ErrorPicture block = fp8ErrorPicture(values, blockDeq, b, side, side);
        e.ownTensor = std::move(tensor.blocks);
        e.ownBlock = std::move(block.blocks);
        e.tensor = &e.ownTensor;
        e.block = &e.ownBlock;
        v.tensorMap = std::make_shared<const Eigen::MatrixXd>(std::move(tensor.map));
        v.blockMap = std::make_shared<const Eigen::MatrixXd>(std::move(block.map));
    }
    // The order depends on the values alone: the same generated matrix has the same one.
    const std::shared_ptr<const Fp8View>& previous = options.previous;
    if (v.generated && previous && previous->generated == v.generated && previous->order)
        e.order = previous->order;
    else if (options.workspace)
        e.order = options.workspace->orderByMagnitude(values, *e.tensor);
    else
        e.order = std::make_shared<const std::vector<std::int64_t>>(fp8OrderByMagnitude(*e.tensor));
    v.order = e.order;
    v.blockCount = static_cast<std::int64_t>(e.tensor->size());
    v.tensorMax = (*e.tensor)[static_cast<std::size_t>(e.order->back())].maxAbs;
    if (side != 0) {
        v.poolRows = (values.rows() + side - 1) / side;
        v.poolCols = (values.cols() + side - 1) / side;
    }
}

/// Step 4: whether the excluded blocks are exactly the largest ranks (the chart's band).
bool excludedOnTop(const Fp8View& v, const std::vector<std::int64_t>& order)
{
    if (v.inputs.values)
        return static_cast<std::int64_t>(v.excluded.size()) < v.blockCount;
    // The generator lists its outliers ascending, each once: a binary search finds them.
    const std::vector<std::int64_t>& outliers = v.excluded;
    const auto k = static_cast<std::int64_t>(outliers.size());
    bool onTop = k > 0 && k < v.blockCount;
    for (std::int64_t r = v.blockCount - k; r < v.blockCount && onTop; ++r)
        onTop = std::binary_search(outliers.begin(), outliers.end(),
                                   order[static_cast<std::size_t>(r)]);
    return onTop;
}

/// One block's round trip with `scale`, value by value as the kernels do it (bit for bit
/// fp8Quantize(x / scale) * scale, see fp8BlockQuantize).
std::vector<float> roundTrip(const std::vector<float>& values, float scale, Fp8Format format,
                             Fp8Overflow overflow)
{
    std::vector<float> out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i)
        out[i] = fp8Quantize(values[i] / scale, format, overflow) * scale;
    return out;
}

/// The relative error of one block's round trip: fp8BlockErrors of the block alone, whose sums
/// run in index order within a block wherever it lies, so it equals the whole matrix's entry.
double blockError(const std::vector<float>& values, const std::vector<float>& dequantized)
{
    const auto n = static_cast<Eigen::Index>(values.size());
    const MatrixF x = Eigen::Map<const MatrixF>(values.data(), 1, n);
    const MatrixF d = Eigen::Map<const MatrixF>(dequantized.data(), 1, n);
    return fp8BlockErrors(x, d, n).front().relativeError;
}

/// Step 5: the block of the grid chart at `percentile` of v's order (v.order, v.tensorScale and
/// v.blockScales are set), given its values: both round trips of them, their errors and the
/// grids near it. The same work whether the whole view was just computed or only the shown
/// block changes (fp8ViewShowingBlock).
void showBlock(double percentile, const std::function<std::vector<float>(std::int64_t)>& valuesOf,
               Fp8View& v)
{
    const Fp8Inputs& in = v.inputs;
    v.shownRank = fp8RankAtPercentile(v.blockCount, percentile);
    v.shownBlock = (*v.order)[static_cast<std::size_t>(v.shownRank)];
    v.shownValues = valuesOf(v.shownBlock);
    const Eigen::Index perRow = v.blockScales.cols();
    v.shownScale = v.blockScales(v.shownBlock / perRow, v.shownBlock % perRow);
    v.shownTensorDeq = roundTrip(v.shownValues, v.tensorScale, in.format, in.overflow);
    v.shownBlockDeq = roundTrip(v.shownValues, v.shownScale, in.format, in.overflow);
    v.shownTensorError = blockError(v.shownValues, v.shownTensorDeq);
    v.shownBlockError = blockError(v.shownValues, v.shownBlockDeq);
    const auto [lo, hi] = std::minmax_element(v.shownValues.begin(), v.shownValues.end());
    v.tensorGrid = fp8ScaledGrid(in.format, v.tensorScale, *lo, *hi);
    v.blockGrid = fp8ScaledGrid(in.format, v.shownScale, *lo, *hi);
}

/// The values of block `block` of the matrix `values` (row-major 1 x b blocks are contiguous).
std::vector<float> sliceBlock(const MatrixF& values, std::int64_t b, std::int64_t block)
{
    return {values.data() + block * b, values.data() + (block + 1) * b};
}

/// Step 6: both error series, smallest block first.
void errorPoints(const BlockErrors& e, int maxPoints, Fp8View& v)
{
    for (std::int64_t r : fp8PlottedRanks(v.blockCount, maxPoints)) {
        const auto i = static_cast<std::size_t>((*e.order)[static_cast<std::size_t>(r)]);
        const double x = static_cast<double>(r + 1);
        const Fp8BlockError& t = (*e.tensor)[i];
        const Fp8BlockError& b = (*e.block)[i];
        if (std::isfinite(t.relativeError))
            v.tensorPoints.push_back({x, 100.0 * t.relativeError});
        if (std::isfinite(b.relativeError))
            v.blockPoints.push_back({x, 100.0 * b.relativeError});
    }
}

/// Steps 2 to 6 for `values`, the matrix of v.inputs (v.excluded already set).
void compare(const MatrixF& values, const Fp8ViewOptions& options, Fp8View& v)
{
    const Fp8Inputs& in = v.inputs;
    v.blockCount = values.size() / in.blockSize;
    TableOutcomes outcomes;
    fillTable(values, in, options, v, outcomes);
    if (!options.charts)
        return;
    throwIfStopAsked(options.stop);
    const MatrixF& tensorDeq = outcomes[kFp8TensorRow].dequantized;
    const MatrixF& blockDeq = outcomes[kFp8ChapterRow].dequantized;
    BlockErrors e; // points into itself or the workspace: filled in place, never copied
    blockErrorsAndMaps(values, tensorDeq, blockDeq, options, v, e);
    throwIfStopAsked(options.stop);
    v.outliersOnTop = excludedOnTop(v, *e.order);
    showBlock(
        options.shownPercentile,
        [&values, b = in.blockSize](std::int64_t block) { return sliceBlock(values, b, block); },
        v);
    errorPoints(e, options.maxPlotPoints, v);
}

/// `count` values of a sample stand for count x share of the whole matrix.
std::int64_t scaledCount(std::int64_t count, double share)
{
    return std::llround(static_cast<double>(count) * share);
}

/// The rows a preview compares: whole bands of kFp8PreviewBand rows (ascending), stacked in
/// order into a matrix of their own, the sample.
struct PreviewRows {
    static constexpr std::int64_t h = kFp8PreviewBand;
    std::vector<std::int64_t> bands;

    /// The matrix's row that is row `i` of the sample.
    std::int64_t matrixRow(std::int64_t i) const
    {
        return bands[static_cast<std::size_t>(i / h)] * h + i % h;
    }
    /// The sample's row that is row `row` of the matrix, or -1 when no band holds it.
    std::int64_t sampleRow(std::int64_t row) const
    {
        const auto it = std::lower_bound(bands.begin(), bands.end(), row / h);
        return it == bands.end() || *it != row / h ? -1 : (it - bands.begin()) * h + row % h;
    }
};

/// Sets v.normals and v.excluded, the generator's normals and outlier list for v.inputs (the
/// whole matrix's), from the workspace, the options or the previous view (of the same shape)
/// where they have them, without making the matrix.
void takeNormalsAndOutliers(const Fp8ViewOptions& options, Fp8View& v)
{
    const Fp8Inputs& in = v.inputs;
    if (options.workspace) {
        v.normals = options.workspace->normals(in);
        v.excluded = options.workspace->outlierBlocks(in);
        return;
    }
    const Fp8View& previous = *options.previous;
    const bool sameNormals = previous.normals && previous.inputs.seed == in.seed;
    if (options.normals && options.normals->rows() == in.rows && options.normals->cols() == in.cols)
        v.normals = options.normals;
    else if (sameNormals)
        v.normals = previous.normals;
    else
        v.normals = std::make_shared<const MatrixF>(fp8NormalMatrix(in));
    // The list depends on the shape, the seed and the block size, not on outlier_scale.
    v.excluded = sameNormals && previous.inputs.blockSize == in.blockSize ? previous.excluded
                                                                          : fp8OutlierBlocks(in);
}

/// Whether the band maxima `kept` (of an earlier view) are those of v's normals and block size.
bool maximaFit(const std::shared_ptr<const Fp8PreviewMaxima>& kept, const Fp8View& v)
{
    return kept && kept->normals && kept->normals == v.normals
        && kept->blockSize == v.inputs.blockSize;
}

/// `bands` with the band that holds the largest |value| of the generated matrix of v.inputs
/// (v.normals and v.excluded set) in place of the nearest one, unless one of them holds it or
/// it lies after the last whole band. Sets v.previewMaxima (from the previous view when its
/// normals and block size are the same).
std::vector<std::int64_t> withLargestValue(std::vector<std::int64_t> bands,
                                           const Fp8ViewOptions& options, Fp8View& v)
{
    const Fp8Inputs& in = v.inputs;
    const std::shared_ptr<const Fp8PreviewMaxima>& kept = options.previous->previewMaxima;
    if (maximaFit(kept, v)) {
        v.previewMaxima = kept;
    } else {
        v.previewMaxima = std::make_shared<const Fp8PreviewMaxima>(
            Fp8PreviewMaxima{v.normals, in.blockSize,
                             fp8BandMaxima(*v.normals, in.blockSize, v.excluded, kFp8PreviewBand)});
    }
    const Fp8BandMaxima& m = v.previewMaxima->bands;
    // Rounding to float32 and clamping keep the order of the scaled values, so the largest in
    // double is a band whose float32 maximum is the matrix's.
    const double scale = std::abs(in.outlierScale);
    std::int64_t top = -1;
    double largest = -1;
    for (std::size_t k = 0; k < m.normal.size(); ++k) {
        const double x = std::max(static_cast<double>(m.normal[k]),
                                  std::min(static_cast<double>(m.outlier[k]) * scale,
                                           static_cast<double>(std::numeric_limits<float>::max())));
        if (x > largest) {
            largest = x;
            top = static_cast<std::int64_t>(k);
        }
    }
    if (top < 0 || std::binary_search(bands.begin(), bands.end(), top))
        return bands;
    // The nearest goes (the first, lower one of two as near).
    auto nearest = std::min_element(bands.begin(), bands.end(), [top](auto a, auto b) {
        return std::abs(a - top) < std::abs(b - top);
    });
    *nearest = top;
    std::sort(bands.begin(), bands.end());
    return bands;
}

/// The sample of `rows` of the generated matrix of v.inputs (v.normals and v.excluded set),
/// made from the normals and the outlier list, and its outlier blocks in its own numbering
/// (ascending, as the matrix's are).
std::pair<MatrixF, std::vector<std::int64_t>> previewSample(const PreviewRows& rows,
                                                            const Fp8View& v)
{
    const Fp8Inputs& in = v.inputs;
    const MatrixF& normals = *v.normals;
    constexpr std::int64_t h = PreviewRows::h;
    const auto n = static_cast<std::int64_t>(rows.bands.size());
    MatrixF sample(n * h, in.cols);
    for (std::int64_t j = 0; j < n; ++j)
        sample.middleRows(j * h, h) =
            normals.middleRows(rows.bands[static_cast<std::size_t>(j)] * h, h);
    const std::int64_t b = in.blockSize;
    const std::int64_t perRow = in.cols / b;
    std::vector<std::int64_t> outliers;
    for (std::int64_t block : v.excluded) {
        const std::int64_t row = rows.sampleRow(block / perRow);
        if (row < 0)
            continue;
        const std::int64_t own = row * perRow + block % perRow;
        const std::vector<float> values = fp8GeneratedBlock(normals, in, block, true);
        std::copy(values.begin(), values.end(), sample.data() + own * b);
        outliers.push_back(own);
    }
    return {std::move(sample), std::move(outliers)};
}

/// A sample's granularity table in the terms of the whole matrix of `in`, which has `share`
/// values for each one of the sample: the whole matrix's tiles and scale counts, and the
/// counts of values rounded to 0 scaled up (rounded). The errors stay the sample's estimates.
void tableInWholeTerms(const Fp8Inputs& in, double share, bool wholeTable,
                       std::vector<Fp8Granularity>& table)
{
    for (std::size_t i = 0; i < table.size(); ++i) {
        Fp8Granularity& g = table[i];
        if (!rowAsked(wholeTable, i))
            continue;
        if (!g.plainCast) {
            g.tiling = tiling(g.scaling, in.rows, in.cols);
            g.scales = ((in.rows + g.tiling.tileRows - 1) / g.tiling.tileRows)
                * ((in.cols + g.tiling.tileCols - 1) / g.tiling.tileCols);
        }
        g.all.underflowCount = scaledCount(g.all.underflowCount, share);
        g.small.underflowCount = scaledCount(g.small.underflowCount, share);
    }
}

/// The preview of v.inputs (Fp8ViewOptions::preview) from the rows of `bands`: those rows are
/// compared as a matrix of their own, and its figures are put in the whole matrix's terms.
void previewBands(const std::vector<std::int64_t>& bands, const Fp8ViewOptions& options, Fp8View& v)
{
    const Fp8Inputs& in = v.inputs;
    takeNormalsAndOutliers(options, v);
    const PreviewRows rows{withLargestValue(bands, options, v)};
    auto [sample, outliers] = previewSample(rows, v);
    const std::int64_t perRow = in.cols / in.blockSize;
    Fp8View s;
    s.inputs = in;
    s.inputs.rows = sample.rows();
    s.excluded = std::move(outliers);
    Fp8ViewOptions sampleOptions;
    sampleOptions.shownPercentile = options.shownPercentile;
    sampleOptions.wholeTable = options.wholeTable;
    sampleOptions.maxPlotPoints = options.maxPlotPoints;
    sampleOptions.mapSide = 0; // the maps shown are the previous view's
    compare(sample, sampleOptions, s);

    // Every row holds perRow blocks: the whole matrix has `share` blocks (and values) for each
    // one of the sample.
    const double share = static_cast<double>(in.rows) / static_cast<double>(sample.rows());
    v.preview = true;
    v.previewRows = sample.rows();
    v.blockCount = in.rows * perRow;
    v.tensorScale = s.tensorScale;
    v.table = std::move(s.table);
    tableInWholeTerms(in, share, options.wholeTable, v.table);
    v.outliersOnTop = s.outliersOnTop;
    v.tensorMax = s.tensorMax;
    v.tensorPoints = std::move(s.tensorPoints);
    v.blockPoints = std::move(s.blockPoints);
    for (std::vector<Fp8ErrorPoint>* points : {&v.tensorPoints, &v.blockPoints})
        for (Fp8ErrorPoint& p : *points)
            p.rank *= share;
    // The shown block is one of the sample's, at its place in the matrix; its figures are its
    // own (with the sample's per-tensor scale: the matrix's when the sample holds its largest
    // value).
    v.shownRank =
        std::max<std::int64_t>(0, std::llround(static_cast<double>(s.shownRank + 1) * share) - 1);
    v.shownBlock = rows.matrixRow(s.shownBlock / perRow) * perRow + s.shownBlock % perRow;
    v.shownTensorError = s.shownTensorError;
    v.shownBlockError = s.shownBlockError;
    v.shownScale = s.shownScale;
    v.shownValues = std::move(s.shownValues);
    v.shownTensorDeq = std::move(s.shownTensorDeq);
    v.shownBlockDeq = std::move(s.shownBlockDeq);
    v.tensorGrid = std::move(s.tensorGrid);
    v.blockGrid = std::move(s.blockGrid);
    const Fp8View& previous = *options.previous;
    v.tensorMap = previous.tensorMap;
    v.blockMap = previous.blockMap;
    v.poolRows = previous.poolRows;
    v.poolCols = previous.poolCols;
}

} // namespace

Fp8View computeFp8View(const Fp8Inputs& in, const Fp8ViewOptions& options)
{
    validate(in);
    Fp8View v;
    v.inputs = in;
    const std::shared_ptr<const Fp8View>& previous = options.previous;
    if (options.preview && options.charts && !in.values && previous && previous->tensorMap
        && previous->blockMap && !previous->inputs.values && previous->inputs.rows == in.rows
        && previous->inputs.cols == in.cols) {
        const std::vector<std::int64_t> bands = fp8PreviewBands(in.rows, in.cols);
        if (!bands.empty()) {
            previewBands(bands, options, v);
            return v;
        }
    }
    const std::shared_ptr<const MatrixF> kept = takeMatrix(in, options, v);
    // The band maxima of the preview before are passed on, so the next preview (the first key
    // press after a slider rested) need not read the whole matrix again to find them.
    if (previous && maximaFit(previous->previewMaxima, v))
        v.previewMaxima = previous->previewMaxima;
    throwIfStopAsked(options.stop);
    const MatrixF& values = *kept;
    if (in.values)
        v.excluded = largestBlocks(values, in.blockSize);
    compare(values, options, v);
    return v;
}

Fp8View fp8ViewShowingBlock(const Fp8View& v, double percentile)
{
    require(v.order != nullptr, "fp8.shown_block", "a view with its charts");
    Fp8View out = v;
    const std::int64_t b = v.inputs.blockSize;
    showBlock(
        percentile,
        [&v, b](std::int64_t block) {
            if (v.inputs.values)
                return sliceBlock(*v.inputs.values, b, block);
            if (v.generated)
                return sliceBlock(*v.generated, b, block);
            // With a workspace the view keeps the normals and the outlier list, not the matrix.
            const bool outlier = std::binary_search(v.excluded.begin(), v.excluded.end(), block);
            return fp8GeneratedBlock(*v.normals, v.inputs, block, outlier);
        },
        out);
    return out;
}

std::vector<std::int64_t> fp8PreviewBands(std::int64_t rows, std::int64_t cols)
{
    if (rows <= 0 || cols <= 0 || rows < (4 * kFp8PreviewValues + cols - 1) / cols)
        return {};
    const std::int64_t bands = rows / kFp8PreviewBand;
    const std::int64_t take =
        std::max<std::int64_t>(1, kFp8PreviewValues / (kFp8PreviewBand * cols));
    if (4 * take > bands)
        return {};
    std::vector<std::int64_t> out;
    for (std::int64_t j = 0; j < take; ++j)
        out.push_back(j * bands / take);
    return out;
}

std::vector<std::int64_t> fp8BlockSizeChoices(std::int64_t cols)
{
    std::vector<std::int64_t> small, large;
    for (std::int64_t d = 1; d * d <= cols; ++d) {
        if (cols % d != 0)
            continue;
        small.push_back(d);
        if (d != cols / d)
            large.push_back(cols / d);
    }
    small.insert(small.end(), large.rbegin(), large.rend());
    return small;
}

std::int64_t fp8BlockSizeFor(std::int64_t cols, std::int64_t preferred)
{
    const std::vector<std::int64_t> choices = fp8BlockSizeChoices(std::max<std::int64_t>(cols, 1));
    std::int64_t pick = choices.front();
    for (std::int64_t c : choices)
        if (c <= preferred)
            pick = c;
    return pick;
}

std::size_t fp8ViewHeapBytes(const Fp8View& v)
{
    const auto bytes = [](const auto& container) {
        return static_cast<std::size_t>(container.size()) * sizeof(*container.data());
    };
    std::size_t total = bytes(v.excluded) + bytes(v.table) + bytes(v.blockScales)
        + bytes(v.blockDequantized) + bytes(v.tensorPoints) + bytes(v.blockPoints)
        + bytes(v.shownValues) + bytes(v.shownTensorDeq) + bytes(v.shownBlockDeq)
        + bytes(v.tensorGrid) + bytes(v.blockGrid);
    for (const auto& map : {v.tensorMap, v.blockMap})
        if (map)
            total += bytes(*map);
    if (v.order)
        total += bytes(*v.order);
    return total;
}

std::vector<std::int64_t> fp8PlottedRanks(std::int64_t blocks, int maxPoints)
{
    std::vector<std::int64_t> ranks;
    if (blocks <= maxPoints) {
        for (std::int64_t r = 0; r < blocks; ++r)
            ranks.push_back(r);
        return ranks;
    }
    // Evenly spread, first and last included: the band's shape without a million markers.
    for (int i = 0; i < maxPoints; ++i)
        ranks.push_back(static_cast<std::int64_t>(std::llround(
            static_cast<double>(i) * static_cast<double>(blocks - 1) / (maxPoints - 1))));
    return ranks;
}

std::int64_t fp8RankAtPercentile(std::int64_t blocks, double percentile)
{
    // Rounded down: the median of an even count is the smaller middle block, so with the
    // chapter's two blocks the small one is shown.
    const double p = std::clamp(percentile, 0.0, 100.0) / 100.0;
    return std::clamp<std::int64_t>(
        static_cast<std::int64_t>(std::floor(p * static_cast<double>(blocks - 1))), 0, blocks - 1);
}

} // namespace scalelab::core
