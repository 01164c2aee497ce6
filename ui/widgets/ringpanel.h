#pragma once

#include "chartpanel.h"
#include "scalelab/core/collectives.h"

#include <QColor>
#include <QPixmap>
#include <cstdint>

QT_BEGIN_NAMESPACE
class QAbstractButton;
class QLabel;
class QPushButton;
class QSlider;
class QTimer;
class QToolButton;
QT_END_NAMESPACE

namespace scalelab::ui {

/// A ring all-reduce played step by step from the core's simulation: the ranks on a circle with
/// the chunk each one sends in the current step, every rank's buffer with its partial sums, the
/// bytes each rank has sent so far, and the plain sum to compare with. Below the picture a step
/// slider and a play/pause button; nothing moves until the user asks. Exports draw the picture
/// only, at the current step.
class RingPanel : public ChartPanel {
    Q_OBJECT

public:
    /// Most ranks drawn; beyond that the panel shows a note instead of an unreadable ring.
    static constexpr int kMaxRanks = 16;

    explicit RingPanel(const QString& name, QWidget* parent = nullptr);

    /// "Ring all-reduce of a demo gradient, 8 ranks, 4 x 8 values" (or, past the ranks it
    /// draws, "Ring all-reduce, step by step").
    QString title() const override;

    /// Shows `demo`. The step is kept when the ring has the same shape as before (the user was
    /// looking at it), otherwise it starts again at step 0 and stops playing.
    void setDemo(const core::RingDemo& demo, std::int64_t bytesPerValue);
    /// Shows the note for `ranks` (more than kMaxRanks) instead of a ring.
    void showTooManyRanks(std::int64_t ranks);
    bool showsNote() const { return m_tooMany > 0; }
    const core::RingDemo& demo() const { return m_demo; }

    /// Steps are 0 (the start) .. 2(n-1); the last one leaves every rank with the sum.
    int step() const { return m_step; }
    int lastStep() const;
    void setStep(int step);
    /// The step being shown, or null in note mode.
    const core::RingStep* currentStep() const;
    /// "Start", "Reduce-scatter step 2 of 3", "All-gather step 3 of 3".
    QString phaseText() const;

    QSlider* stepSlider() const { return m_slider; }
    QAbstractButton* playButton() const;
    bool isPlaying() const;
    void setPlaying(bool play);

    /// The colour of rank `rank` wherever the tab draws ranks (16 fixed colours; the rank's
    /// number is always written beside it, so colour is never the only cue).
    static QColor rankColor(int rank);

    void render(QPainter& painter, const QRectF& target) override;

signals:
    void stepChanged(int step);
    /// The note's button: the user asks to watch a ring small enough to draw.
    void fewerRanksRequested(int ranks);

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    void advance();
    /// The state changed: the cached picture is stale.
    void changed();
    void syncControls();
    /// The title over the picture; returns the rest of `area`.
    QRectF renderTitle(QPainter& painter, const QRectF& area) const;
    /// What happens in the current step, in words.
    QString stepDescription() const;
    /// The phase line at the top of `body`; returns its height.
    double renderPhase(QPainter& painter, const QRectF& body, double areaWidth) const;
    /// The caption at the bottom of `body`; returns its box.
    QRectF renderCaption(QPainter& painter, const QRectF& body, double scale) const;
    void renderRing(QPainter& painter, const QRectF& area, double scale);
    void renderBuffers(QPainter& painter, const QRectF& area, double scale);
    void renderNote(QPainter& painter, const QRectF& area);
    QString stepCaption() const;

    core::RingDemo m_demo;
    std::int64_t m_bytesPerValue = 0;
    std::int64_t m_tooMany = 0; ///< the rank count the note speaks of; 0 when a ring is shown
    int m_step = 0;
    int m_version = 0; ///< counts state changes, for the cached picture
    QPixmap m_cache; ///< the picture as last painted on screen
    QString m_cacheKey;

    QWidget* m_strip = nullptr;
    QToolButton* m_play = nullptr;
    QSlider* m_slider = nullptr;
    QLabel* m_stepLabel = nullptr;
    QPushButton* m_fewer = nullptr;
    QTimer* m_timer = nullptr;
};

} // namespace scalelab::ui
