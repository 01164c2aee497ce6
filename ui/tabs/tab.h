#pragma once

#include "scalelab/core/scenario.h"

#include <QList>
#include <QString>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QLabel;
class QTimer;
QT_END_NAMESPACE

namespace scalelab::ui {

class ChartPanel;

/// One topic of the window. A tab owns its section of the scenario, builds its controls and
/// chart series once, and on any change schedules one recompute: several slider steps inside
/// one turn of the event loop cost one core call and one redraw.
class Tab : public QWidget {
    Q_OBJECT

public:
    explicit Tab(QWidget* parent = nullptr);

    /// The scenario section and export name: "memory", "zero", ...
    virtual QString name() const = 0;
    /// The tab's title in the window.
    virtual QString title() const = 0;
    /// Every chart, in the order they are exported.
    virtual QList<ChartPanel*> charts() const = 0;

    /// Loads this tab's section of `scenario` into its controls and redraws.
    virtual void setScenario(const core::Scenario& scenario) = 0;
    /// Writes this tab's section into `scenario`.
    virtual void writeScenario(core::Scenario& scenario) const = 0;

    /// Recomputes and redraws at once (the live loop calls it through a zero-delay timer).
    void refreshNow();
    /// Whether a recompute is scheduled but has not run yet.
    bool refreshPending() const;

signals:
    /// The user changed an input (after the tab's own section has been updated).
    void scenarioChanged();
    /// Charts and figures now show the current inputs.
    void refreshed();

protected:
    /// Called by subclasses whenever an input changes.
    void scheduleRefresh();
    /// Calls core and updates the charts. Throws core::InputError for inputs core refuses.
    virtual void recompute() = 0;
    /// A line under the charts for problems; empty hides it.
    QLabel* messageLabel() const { return m_message; }

private:
    QTimer* m_timer;
    QLabel* m_message;
};

} // namespace scalelab::ui
