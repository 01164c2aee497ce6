#pragma once

#include "scalelab/core/layoutsearch.h"
#include "tablepanel.h"

#include <memory>
#include <optional>

QT_BEGIN_NAMESPACE
class QLabel;
class QTableWidget;
QT_END_NAMESPACE

namespace scalelab::ui {

/// The layout search in words: a heading with what was searched and where the plan's own
/// layout ranks, a table of the ten fastest layouts that fit (each with its largest time term
/// and the term that sets it apart from the next one), and, under it, the selected layout in
/// full. Enter on a row, a double click or its Load button asks for that layout in the plan.
/// When nothing fits the table lists the closest candidates and the constraint each breaks.
/// It sits in the plan tab's chart grid and render() draws it like a chart.
class PlanSearchPanel : public TablePanel {
    Q_OBJECT

public:
    explicit PlanSearchPanel(const QString& name, QWidget* parent = nullptr);

    /// A search is on its way: the heading says so and the table keeps the last result, greyed.
    void setSearching();
    /// A search that could not run (its inputs are refused, or over a limit): `message` shows
    /// and the table empties.
    void setFailed(const QString& message);
    /// Shows a finished search, which took `seconds` and kept `kept` (keptText of its scope).
    void setResult(std::shared_ptr<const core::LayoutSearchResult> result, double seconds,
                   const QString& kept);
    /// Where the plan's own layout stands: its keys and, when it is valid, its step time and
    /// whether it fits; the heading names its rank among the fitting ones.
    void setYours(const core::LayoutKey& key, std::optional<double> stepSeconds, bool fits);

    const core::LayoutSearchResult* result() const { return m_result.get(); }
    /// The rank (0 = fastest) of the plan's own layout among the fitting ones, or -1.
    int yourRank() const { return m_yourRank; }
    bool searching() const { return m_searching; }

    /// Selects ranked layout `rank` (a table row) and shows it in full.
    void selectRank(int rank);

    /// "t 8 · p 4 (v 3) · d 32 · b 1 · ZeRO-1 · SP · selective": a layout in one line.
    static QString layoutText(const core::LayoutKey& key);
    /// "t 8 · no ZeRO": the keys a search of `plan` keeps at their values; empty when none.
    static QString keptText(const core::PlanInputs& plan);
    /// A step-time term of core's ("bubble", "data_parallel_exposed", ...) in words.
    static QString termName(const std::string& term);

signals:
    /// Asks for ranked layout `rank` in the plan (Enter, a double click, a Load button).
    void loadRequested(int rank);

protected:
    void showDetail(int row) override;

private:
    void fillRanked();
    void fillClosest();
    void showHeading();

    std::shared_ptr<const core::LayoutSearchResult> m_result;
    double m_seconds = 0;
    QString m_kept; ///< keptText of the shown result's search
    bool m_searching = false;
    QString m_failure;
    core::LayoutKey m_yours;
    std::optional<double> m_yourSeconds;
    bool m_yourFits = false;
    int m_yourRank = -1;
};

} // namespace scalelab::ui
