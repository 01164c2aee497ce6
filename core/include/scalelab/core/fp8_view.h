#pragma once

#include "scalelab/core/fp8.h"

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <vector>

namespace scalelab::core {

/// Rows of the FP8 granularity table, in order: the plain cast, per tensor, per row, 1 x 128,
/// 128 x 128, the chapter's 1 x block_size and 1 x 32 with E8M0 scales.
inline constexpr int kFp8CastRow = 0;
inline constexpr int kFp8TensorRow = 1;
inline constexpr int kFp8PerRowRow = 2;
inline constexpr int kFp8Tile128Row = 3;
inline constexpr int kFp8Block128Row = 4;
inline constexpr int kFp8ChapterRow = 5;
inline constexpr int kFp8MxRow = 6;
inline constexpr int kFp8TableRows = 7;

/// How the tiles of one granularity cut the matrix (in values).
struct Fp8Tiling {
    std::int64_t wantRows = 0, wantCols = 0; ///< the tile asked for (0 = the whole extent)
    std::int64_t tileRows = 0, tileCols = 0; ///< the tile used: at most the matrix
    std::int64_t edgeRows = 0, edgeCols = 0; ///< the last tile of a column / of a row
    /// The tiles asked for divide the matrix: no tile was clipped or cut short.
    bool even = true;
};

/// One row of the granularity table: one scaling of the whole matrix.
struct Fp8Granularity {
    Fp8Scaling scaling;
    bool plainCast = false; ///< no scale at all: the value is cast as it is
    std::int64_t scales = 0; ///< scales stored (0 for the plain cast)
    Fp8Tiling tiling; ///< how the tiles are cut (even for the plain cast)
    Fp8Stats all; ///< over the whole matrix
    Fp8Stats small; ///< over the small blocks only (see Fp8View::excluded)
};

/// A point of the block-error chart: a block's rank by magnitude (from 1) and its relative
/// error in %.
struct Fp8ErrorPoint {
    double rank = 0;
    double percent = 0;
    bool operator==(const Fp8ErrorPoint&) const = default;
};

/// Most points a block-error series holds; more blocks are sampled evenly by rank.
inline constexpr int kFp8MaxPlotPoints = 2000;
/// Most heatmap cells a side (larger matrices are max-pooled).
inline constexpr int kFp8MapSide = 1024;

/// Previews (Fp8ViewOptions::preview) compare whole bands of this many rows, so that every
/// tiling of the table (at most 128 rows high) cuts a band into whole tiles.
inline constexpr std::int64_t kFp8PreviewBand = 128;
/// About how many values a preview compares: one band at 4096 columns, which the worker
/// compares in about 5 ms on two cores (twice as many took 9 ms on a slower machine, over half
/// of a 60 Hz frame before anything is drawn).
inline constexpr std::int64_t kFp8PreviewValues = std::int64_t{1} << 19;

/// The bands of kFp8PreviewBand rows (their indices, ascending) a preview of a rows x cols
/// matrix compares: about kFp8PreviewValues values (at least one band), spread evenly from the
/// first band on. Empty when the matrix is compared whole anyway: fewer than
/// 4 x kFp8PreviewValues values, or too few bands for the preview to skip three in four.
std::vector<std::int64_t> fp8PreviewBands(std::int64_t rows, std::int64_t cols);

/// What a preview keeps for the next one: the band maxima (fp8BandMaxima, bands of
/// kFp8PreviewBand rows) of `normals` with the outlier list of `blockSize`.
struct Fp8PreviewMaxima {
    std::shared_ptr<const MatrixF> normals;
    std::int64_t blockSize = 0;
    Fp8BandMaxima bands;
};

/// The FP8 comparison of one matrix: the granularity table, the figures `scalelab report`
/// prints and what the FP8 tab draws. One computation for both (computeFp8View).
struct Fp8View {
    Fp8Inputs inputs; ///< what it was computed for
    /// A preview (Fp8ViewOptions::preview): the figures are estimates from previewRows rows,
    /// the bands fp8PreviewBands names, not the whole matrix's.
    bool preview = false;
    std::int64_t previewRows = 0; ///< rows a preview compared (0 when not a preview)
    std::int64_t blockCount = 0; ///< 1 x blockSize blocks of the matrix
    /// Blocks left out of the "small blocks" figures: the generator's outlier blocks (ascending),
    /// or for explicit values the blocks that hold the largest |value|.
    std::vector<std::int64_t> excluded;
    float tensorScale = 1; ///< the per-tensor scale, max|x| / max_value
    /// The granularity table, kFp8TableRows rows; kFp8TensorRow and kFp8ChapterRow are the two
    /// the charts compare.
    std::vector<Fp8Granularity> table;
    /// The chapter's 1 x blockSize scales, rows x (cols / blockSize).
    MatrixF blockScales;
    /// The matrix after the chapter's round trip; kept for explicit values only (the report
    /// prints it for them), empty otherwise.
    MatrixF blockDequantized;

    // The chart parts (Fp8ViewOptions::charts); left empty or 0 without them.
    bool outliersOnTop = false; ///< the excluded blocks are exactly the largest ones
    float tensorMax = 0; ///< max |value| of the matrix
    /// fp8-block-error: smallest block first. At most maxPlotPoints ranks, evenly spread.
    /// A non-finite error (a NaN-mode overflow) is left out.
    std::vector<Fp8ErrorPoint> tensorPoints, blockPoints;
    /// The block of the grid chart: its index, rank (from 0), relative errors (fractions), own
    /// scale, values and what each scaling gives back.
    std::int64_t shownBlock = 0;
    std::int64_t shownRank = 0;
    double shownTensorError = 0;
    double shownBlockError = 0;
    float shownScale = 1;
    std::vector<float> shownValues, shownTensorDeq, shownBlockDeq;
    /// fp8-grid: the representable values near the block, for each scale (fp8ScaledGrid).
    std::vector<float> tensorGrid, blockGrid;
    /// fp8-heatmap: |error| max-pooled to at most mapSide cells a side (null without the chart
    /// parts), and the pool sizes. Shared, as they do not change with the shown block.
    std::shared_ptr<const Eigen::MatrixXd> tensorMap, blockMap;
    std::int64_t poolRows = 1, poolCols = 1;

    /// Previews: the band maxima that found the band of the largest |value|, kept so the next
    /// preview of the same normals and block size does not read the whole matrix again. An
    /// exact view keeps those of the view before it, for the preview after it.
    std::shared_ptr<const Fp8PreviewMaxima> previewMaxima;
    /// The generator's normal matrix, kept so a change of block size or outlier scale does not
    /// draw it again (null for explicit values).
    std::shared_ptr<const MatrixF> normals;
    /// The generated matrix with its outliers, kept so a change of format, overflow or shown
    /// block does not build it again (null for explicit values, and with a workspace, which
    /// keeps it instead).
    std::shared_ptr<const MatrixF> generated;
    /// With the chart parts: the block indices ordered by magnitude (fp8OrderByMagnitude of the
    /// matrix's blocks), kept so a change that leaves the generated matrix as it is does not sort
    /// them again; else null.
    std::shared_ptr<const std::vector<std::int64_t>> order;
};

/// What computeFp8View computes besides the table, and what it may reuse.
struct Fp8ViewOptions {
    /// The block of the grid chart: this percentile of the blocks ordered by magnitude.
    double shownPercentile = 50;
    /// Also the chart parts (block errors, points, the shown block, grids, maps). The report
    /// needs the table only; without charts (and without `normals`) no matrix is kept for
    /// reuse: normals and generated are null.
    bool charts = true;
    /// Every row of the granularity table, or only kFp8TensorRow and kFp8ChapterRow without
    /// their small-block figures (the report's; the rest is then left default).
    bool wholeTable = true;
    int maxPlotPoints = kFp8MaxPlotPoints;
    /// Cells a side of the error maps at most; 0: no maps (tensorMap and blockMap null).
    std::int64_t mapSide = kFp8MapSide;
    /// fp8NormalMatrix(inputs) from an earlier call, or null.
    std::shared_ptr<const MatrixF> normals;
    /// A quick estimate while a slider is being dragged, taken when fp8PreviewBands(rows, cols)
    /// is not empty, the matrix is generated (not explicit), the charts are asked for and
    /// `previous` has error maps of a generated matrix of the same shape; otherwise the whole
    /// comparison is made, as without it.
    /// A preview compares only the rows of those bands, one of them exchanged for the band that
    /// holds the largest |value| if none does (the nearest), so that the per-tensor scale is
    /// the whole matrix's (unless that value lies in the rows after the last whole band;
    /// finding the band reads the whole matrix once per normals and block size: the first
    /// preview takes longer). The table (its scale counts and tilings
    /// are the whole matrix's; its counts of values rounded to 0 are scaled up to the whole
    /// matrix, rounded), the block-error series (their ranks scaled to the whole matrix's) and
    /// the shown block (a block of the bands; its own figures are exact). The error maps are
    /// previous's, not made again; excluded, blockCount and normals are the whole matrix's,
    /// which is not made (the bands are taken from its normals and outlier list): generated,
    /// blockScales and order stay empty, so fp8ViewShowingBlock refuses a preview.
    bool preview = false;
    /// An earlier view whose generated matrix is reused when the generation keys (rows, cols,
    /// seed, block size, outlier scale) are the same, or null.
    std::shared_ptr<const Fp8View> previous;
    /// Where a generated matrix comes from and where the round trips and error pictures keep
    /// their large buffers from call to call (the same figures), or null: everything is
    /// allocated afresh. A workspace serves one computation at a time.
    std::shared_ptr<Fp8Workspace> workspace;
    /// Read between the steps of the comparison, and with a workspace within its round trips
    /// and error pictures (pieces of about 65,536 values): when it asks to stop, computeFp8View
    /// throws Stopped (a newer request took this one's place; at 4096 x 4096 it gives up within
    /// about a millisecond instead of finishing 80 ms of work nobody will see). Null: never.
    StopFlag stop = nullptr;
};

/// The whole comparison for `in` (any thread): every granularity's round trip in one pass, and
/// with options.charts what the tab draws. Throws InputError (validates first), or Stopped
/// when options.stop asks for it.
Fp8View computeFp8View(const Fp8Inputs& in, const Fp8ViewOptions& options = {});

/// `v` (a view with its chart parts) with the grid chart on the block at `percentile` instead:
/// bit for bit what computeFp8View(v.inputs) gives with that shownPercentile, for the work of one
/// block. Everything else is v's (copied; the maps, order and matrices shared), as no other
/// figure depends on the shown block. Any thread; reads only what `v` holds, which no later
/// computation changes. Throws InputError naming `fp8.shown_block` for a view without charts.
Fp8View fp8ViewShowingBlock(const Fp8View& v, double percentile);

/// The block sizes that divide `cols`, ascending (cols >= 1).
std::vector<std::int64_t> fp8BlockSizeChoices(std::int64_t cols);
/// The largest divisor of `cols` not above `preferred` (1 when none is: preferred < 1).
std::int64_t fp8BlockSizeFor(std::int64_t cols, std::int64_t preferred);
/// The ranks (from 0) a series of `blocks` blocks draws: all of them up to `maxPoints`,
/// otherwise `maxPoints` ranks spread evenly from the first to the last.
std::vector<std::int64_t> fp8PlottedRanks(std::int64_t blocks, int maxPoints);

/// Bytes of the buffers `v` holds of its own, and of its block order: what the next view of
/// the same shape asks for afresh while this one is still shown (the matrices it shares with
/// a workspace are not counted).
std::size_t fp8ViewHeapBytes(const Fp8View& v);
/// The rank (from 0) of the block at `percentile` of `blocks` blocks, rounded down.
std::int64_t fp8RankAtPercentile(std::int64_t blocks, double percentile);

} // namespace scalelab::core
