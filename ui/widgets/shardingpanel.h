#pragma once

#include "chartpanel.h"

#include <QColor>
#include <QList>
#include <QRectF>
#include <QString>
#include <cstdint>
#include <vector>

namespace scalelab::ui {

/// The colour of rank `rank` wherever a tab shows ranks (Okabe-Ito, repeating every seven
/// ranks; the picture writes rank numbers, so a repeat is never the only clue).
QColor rankColor(std::int64_t rank);

/// A matrix-flow picture of a sharded computation: blocks left to right (X, W1, H, ...) with
/// the steps between them (a product sign, an arrow for GELU, the all-reduce where partial
/// outputs meet). Each block is drawn with its true shape compressed (side ~ sqrt of the
/// dimension, so a 4096-wide matrix does not squeeze a 16-wide one to nothing), split into
/// the shards each rank holds in that rank's colour, with its shape written under it. Many
/// ranks thin the labels rather than overlap them.
class ShardingPanel : public ChartPanel {
    Q_OBJECT

public:
    enum class Split {
        Whole, ///< not split: every rank has all of it (drawn neutral grey)
        Columns, ///< shards along the columns, `shards` columns each
        Rows, ///< shards along the rows, `shards` rows each
        /// Only the diagonal blocks `shards` rows x `columnShards` columns are used; the rest
        /// is hatched (terms no rank can compute).
        BlockDiagonal,
        Stack, ///< `items` matrices of rows x cols, one per rank, drawn as a column
    };

    struct Block {
        QString name; ///< above the block, e.g. "W₁"
        std::int64_t rows = 1;
        std::int64_t cols = 1;
        Split split = Split::Whole;
        std::vector<std::int64_t> shards;
        std::vector<std::int64_t> columnShards; ///< BlockDiagonal only
        std::int64_t items = 0; ///< Stack only
        /// Stack only: each item's label, "%1" standing for its rank as a subscript ("O%1").
        QString itemLabel;
        QString note; ///< a short line under the shape ("on every rank")
    };

    struct Step {
        enum class Kind {
            Text, ///< a sign such as "×" or "="
            Arrow, ///< an arrow with its label above ("GELU")
            Reduce, ///< lines from every item of the stack on its left meeting in a sum
        };
        Kind kind = Kind::Text;
        QString label;
    };

    struct Picture {
        QString title;
        std::vector<Block> blocks;
        std::vector<Step> steps; ///< blocks.size() - 1 of them, between the blocks
        QString caption; ///< under the picture, wrapped
        std::int64_t ranks = 1; ///< for the colour key
    };

    explicit ShardingPanel(const QString& name, QWidget* parent = nullptr);

    void setPicture(Picture picture);
    const Picture& picture() const { return m_picture; }
    QString title() const override { return m_picture.title; }

    /// Where each block's matrix is drawn when the picture fills `size` (tests, tooltips).
    QList<QRectF> blockRects(const QSizeF& size) const;
    /// The shard labels that fit when drawn at `size`, per block (rank numbers on stripes,
    /// "O₀" on stack items): tests check that thinning keeps them apart.
    QList<QList<QRectF>> labelRects(const QSizeF& size) const;

    void render(QPainter& painter, const QRectF& target) override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    struct Layout;
    Layout layoutFor(const QRectF& target) const;
    Layout layoutAt(const QRectF& target, bool notes, bool shards, double scale, int rows) const;

    Picture m_picture;
};

} // namespace scalelab::ui
