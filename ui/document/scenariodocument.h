#pragma once

#include "scalelab/core/scenario.h"

#include <QObject>
#include <QString>
#include <functional>

QT_BEGIN_NAMESPACE
class QUndoStack;
QT_END_NAMESPACE

namespace scalelab::document {

struct Field;

/// The one scenario of a window (or of an off-screen export), and the only way to change it.
/// Every change is an undo command: a control's edit, an opened file, a preset, a reset. Edits
/// of one section in quick succession (a slider drag, a held arrow key) merge into one step.
/// After every change, undo and redo included, sectionChanged() names each section that now
/// differs; views render from scenario() and never keep a copy of their inputs.
class ScenarioDocument : public QObject {
    Q_OBJECT

public:
    explicit ScenarioDocument(QObject* parent = nullptr);
    explicit ScenarioDocument(const core::Scenario& scenario, QObject* parent = nullptr);

    const core::Scenario& scenario() const { return m_scenario; }
    QUndoStack* undoStack() const { return m_undo; }

    /// A field's value now (a flag as 0 or 1, a choice as its index).
    double value(const QString& key) const;
    /// Sets one field from a control, as one undo step merged with the previous one when that
    /// edited the same section a moment ago (a slider drag, a held arrow key). The section's rules then keep it consistent
    /// (segments <= layers, ...). Returns false when nothing changed.
    bool setValue(const QString& key, double value);
    /// Any other change of one section (a button that sets several fields, a list): `change`
    /// edits a copy, the section's rules apply, and it becomes one undo step named `text`.
    bool edit(core::Section section, const QString& text,
              const std::function<void(core::Scenario&)>& change);
    /// Replaces the whole scenario as one undo step (an opened file, a preset, an exercise).
    /// The scenario must be valid (core::validate); the caller reads and checks it first.
    bool replace(const core::Scenario& scenario, const QString& text);
    /// Puts one section back to the defaults as one undo step.
    bool resetSection(core::Section section, const QString& text);
    /// Starts over from `scenario` with no undo history (a restored session, a fresh view).
    void load(const core::Scenario& scenario);

    /// How long after an edit of a section the next edit of it still merges into the same step.
    static constexpr qint64 kMergeMs = 1500;

signals:
    /// `section` of scenario() changed, by an edit, undo, redo or replacement.
    void sectionChanged(core::Section section);

private:
    friend class ScenarioCommand;
    /// Sets the scenario and announces every section that changed.
    void apply(const core::Scenario& scenario);
    void push(core::Scenario after, const QString& text, const QString& mergeKey);

    core::Scenario m_scenario;
    QUndoStack* m_undo;
};

/// The rules that keep one section consistent after `field` (null: any change) moved from
/// `before`: ranges that follow other inputs, experts in whole blocks per rank, explicit lists
/// that no longer match. Plain function, tested without a window.
void normalizeSection(const core::Scenario& before, core::Scenario& after, core::Section section,
                      const Field* field);

} // namespace scalelab::document
