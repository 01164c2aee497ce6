#pragma once

#include "scalelab/core/scenario.h"

#include <QString>
#include <QStringView>
#include <cmath>
#include <functional>
#include <type_traits>
#include <vector>

namespace scalelab::document {

/// How a field's value is written in a scenario file and edited on screen. Every value travels
/// as a double: whole numbers up to 2^53 exactly, a flag as 0 or 1, a choice as its index.
enum class FieldKind {
    Whole, ///< a whole number: slider and spin box; JSON integer
    Number, ///< a real number: slider and spin box; JSON number
    Flag, ///< a check box; JSON true or false
    Choice, ///< a combo box; JSON string, one of `choices`
};

/// One input of a scenario, declared once. The scenario reader and writer, the controls (their
/// label, unit, tooltip and range) and the document's edits are all made from these entries;
/// adding an input is one entry here plus its use in core.
struct Field {
    core::Section section = core::Section::Memory;
    QString key; ///< "memory.layers": the JSON path, also the control's object name
    FieldKind kind = FieldKind::Whole;
    const char* label = ""; ///< "&Layers" (untranslated; label() translates)
    QString symbol; ///< the chapter's symbol, "L"
    const char* unit = ""; ///< "layers" (untranslated)
    const char* help = ""; ///< one sentence for the tooltip (untranslated)
    double minimum = 0; ///< the control's range; core checks what a computation accepts
    double maximum = 100;
    bool log = false; ///< a log-scale slider, with K/M/B/T suffixes in the spin box
    int decimals = 0;
    double step = 1;
    std::vector<const char*> choices; ///< Choice: the JSON names, in index order
    std::vector<const char*> choiceLabels; ///< Choice: what the combo box shows (untranslated)
    /// False for a control that shows saved keys another way (memory.sequence is tokens / batch).
    bool saved = true;

    std::function<double(const core::Scenario&)> get;
    std::function<void(core::Scenario&, double)> set;
    /// How the scenario reader stores a value read from a file, when that differs from `set`
    /// (which acts like the control: moving the batch keeps the sequence length, while a file's
    /// batch is just the batch). Unset means `set`.
    std::function<void(core::Scenario&, double)> load;
    /// For keys that may be absent (plan.model.kv_heads follows heads until set): whether the
    /// scenario holds one. Unset means the key is always present.
    std::function<bool(const core::Scenario&)> isSet;
    /// A maximum that follows another input (segments <= layers), applied to the control's
    /// range and to edits. Unset means `maximum`.
    std::function<double(const core::Scenario&)> maximumFrom;
    /// A minimum that follows another input (experts start at the ranks). Unset means `minimum`.
    std::function<double(const core::Scenario&)> minimumFrom;
    /// What the control shows when that is not the value itself (a capacity factor of 0, no
    /// limit, shows the factor the check box would turn on). Unset means `get`.
    std::function<double(const core::Scenario&)> shown;

    QString translatedLabel() const;
    QString translatedUnit() const;
    QString translatedHelp() const;
    QStringList translatedChoices() const;
    /// "layers" of "memory.layers", "kv_heads" of "plan.model.kv_heads".
    QString jsonKey() const;
    /// "memory" of "memory.layers", "plan.model" of "plan.model.kv_heads".
    QString jsonObject() const;
    /// The largest value the control offers in `scenario`.
    double maximumIn(const core::Scenario& scenario) const;
    /// The smallest value the control offers in `scenario`.
    double minimumIn(const core::Scenario& scenario) const;
    /// The value the control shows in `scenario`.
    double shownIn(const core::Scenario& scenario) const;
};

/// Every field of every section, in each section's order.
const std::vector<Field>& fields();
/// The fields of one section, in order.
std::vector<const Field*> sectionFields(core::Section section);
/// The field whose key is `key`, or null.
const Field* findField(QStringView key);
/// The section a name ("memory", ...) stands for; false when there is none.
bool sectionFromName(QStringView name, core::Section* section);

namespace detail {
// Tables, one per section (fields_<section>.cpp).
void addMemoryFields(std::vector<Field>& out);
void addZeroFields(std::vector<Field>& out);
void addTensorParallelFields(std::vector<Field>& out);
void addPipelineFields(std::vector<Field>& out);
void addExpertsFields(std::vector<Field>& out);
void addFp8Fields(std::vector<Field>& out);
void addFp8TrainingFields(std::vector<Field>& out);
void addPlanFields(std::vector<Field>& out);

// Each section's consistency rules after an edit of `field` (null: any change), beside its
// table. Fields with a maximumFrom are already clamped when these run.
void normalizeMemory(const core::Scenario& before, core::Scenario& after, const Field* field);
void normalizeZero(const core::Scenario& before, core::Scenario& after, const Field* field);
void normalizeTensorParallel(const core::Scenario& before, core::Scenario& after,
                             const Field* field);
void normalizePipeline(const core::Scenario& before, core::Scenario& after, const Field* field);
void normalizeExperts(const core::Scenario& before, core::Scenario& after, const Field* field);
void normalizeFp8(const core::Scenario& before, core::Scenario& after, const Field* field);
void normalizePlan(const core::Scenario& before, core::Scenario& after, const Field* field);
} // namespace detail

/// Conversions of a member to and from the double every field travels as.
template <typename T> double fieldValue(const T& v)
{
    if constexpr (std::is_enum_v<T>)
        return static_cast<double>(static_cast<int>(v));
    else
        return static_cast<double>(v);
}

template <typename T> void assignField(T& out, double v)
{
    if constexpr (std::is_same_v<T, bool>)
        out = v != 0.0;
    else if constexpr (std::is_enum_v<T>)
        out = static_cast<T>(static_cast<int>(v));
    else if constexpr (std::is_integral_v<T>)
        out = static_cast<T>(std::llround(v));
    else
        out = static_cast<T>(v);
}

/// `f` reading and writing the member at `Path` (&Scenario::plan, &PlanInputs::model,
/// &ModelShape::layers).
template <auto... Path> Field bound(Field f)
{
    f.get = [](const core::Scenario& s) {
        return fieldValue((s.*....*Path));
    };
    f.set = [](core::Scenario& s, double v) {
        assignField((s.*....*Path), v);
    };
    return f;
}

/// A field for the table: a slider (whole or real number) with its range.
Field numberField(core::Section section, const char* key, FieldKind kind, const char* label,
                  const QString& symbol, const char* unit, const char* help, double minimum,
                  double maximum, bool log = false);
/// A check box.
Field flagField(core::Section section, const char* key, const char* label, const char* help);
/// A combo box over JSON names, with what the box shows for each.
Field choiceField(core::Section section, const char* key, const char* label, const char* help,
                  std::vector<const char*> names, std::vector<const char*> labels);

} // namespace scalelab::document
