#pragma once

#include <QList>
#include <QStringList>

QT_BEGIN_NAMESPACE
class QWidget;
QT_END_NAMESPACE

namespace scalelab::document {
class ScenarioDocument;
} // namespace scalelab::document

namespace scalelab::ui {

class Tab;

/// When a new tab first draws its inputs: at once (a tab on its own, a test), or when it is
/// first shown or waited for (Tab::waitForIdle): a window draws only the tab on show before it
/// first paints, and the rest after (MainWindow).
enum class FirstDrawing { AtOnce, WhenShown };

/// Every tab, in the window's order, each a view of `document`; a tab exists once its topic is
/// built. The plan tab is handed the compiled-in presets.
QList<Tab*> createTabs(document::ScenarioDocument* document, QWidget* parent = nullptr,
                       FirstDrawing first = FirstDrawing::AtOnce);

/// The tab at `index` of createTabs()'s list alone (0 <= index < tabNames().size()).
Tab* createTab(int index, document::ScenarioDocument* document, QWidget* parent = nullptr,
               FirstDrawing first = FirstDrawing::AtOnce);

/// The names of the tabs createTabs() makes ("memory", ...): the scenario's section names.
QStringList tabNames();
/// Their titles in the window ("Memory budget", ...), in the same order.
QStringList tabTitles();
/// A word or two for each ("Memory", ...): the tab bar's titles when the whole ones do not fit.
QStringList tabShortTitles();

} // namespace scalelab::ui
