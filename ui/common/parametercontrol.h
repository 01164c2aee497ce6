#pragma once

#include <QDoubleSpinBox>
#include <QFont>
#include <QList>
#include <QString>
#include <QWidget>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

class QLabel;
class QSlider;

namespace scalelab::ui {

/// Everything a tab says about one input; the control is built from it alone.
struct ParameterSpec {
    QString key; ///< object name and scenario path, e.g. "memory.parameters"
    QString label; ///< "Parameters"; may carry a mnemonic ("&Parameters" gives Alt+P)
    QString symbol; ///< the chapter's symbol, e.g. "P" (shown in the tooltip)
    QString unit; ///< "parameters", "bytes", "GB", "tokens" ... shown after the spin box
    QString description; ///< one sentence for the tooltip and the accessible description
    double minimum = 0, maximum = 100; ///< clamped to +-2^53, where doubles stop being whole-exact
    enum class Scale { Linear, Log } scale = Scale::Linear; ///< Log needs maximum > 0
    int decimals = 0; ///< 0 = whole numbers
    double step = 1; ///< spin box and slider step on a linear scale
    bool suffixes = false; ///< K/M/B/T understood when typing, and used when displaying
};

/// How every control shows a number: C locale, ',' between thousands, `decimals` places. With
/// `suffixes` a value of at least 1,000 that is a whole multiple shows as e.g. "7B", "1.5T" or
/// "8.03B" when that form is exact, has at most 4 significant digits and is shorter than the
/// grouped number (so 4096 stays "4,096"). Tabs may use it to print values in their texts.
QString formatQuantity(double value, int decimals, bool suffixes);

/// Reads a number the way the spin boxes do: "4096", "7,000,000,000" (strict groups of three),
/// "7e9", and with `suffixes` also "7B", "1.5t", "175 B", "8k" (K=1e3, M=1e6, B or G=1e9,
/// T=1e12). The result is the double nearest the decimal typed, so whole values up to 2^53 are
/// exact. nullopt for anything else, including half-typed text.
std::optional<double> parseQuantity(const QString& text, bool suffixes);

/// What typed text reads as, keystroke by keystroke: Invalid when no continuation can make it a
/// number (the keystroke is refused), Intermediate when one still could ("1,23", "7e", "-",
/// blank text, or a number too large for a double), Acceptable for a finite number (whatever
/// a field's range), with its value as parseQuantity() gives it.
struct QuantityReading {
    QValidator::State state = QValidator::Invalid;
    double value = 0;
};
QuantityReading readQuantity(const QString& text, bool suffixes);

/// The spin box of a ParameterControl: reads and writes numbers through parseQuantity and
/// formatQuantity (C locale, independent of the user's locale, so scenario values and tests
/// read the same everywhere). Text that cannot become a number is refused keystroke by keystroke;
/// text that could (half typed, out of range, too many decimals) is Intermediate and is never
/// accepted: Enter or leaving the field then restores the previous value.
class ParameterSpinBox : public QDoubleSpinBox {
    Q_OBJECT

public:
    explicit ParameterSpinBox(bool suffixes, QWidget* parent = nullptr);

    bool suffixes() const { return m_suffixes; }

    /// Replaces the arrow/Page key step (value, steps) -> new value. Unset: value +- singleStep.
    void setStepper(std::function<double(double, int)> stepper);

    /// The range a value may take: what typing, the arrows and the refusal message go by. Use it
    /// instead of setRange(), which Qt follows with a relayout of the whole tab at every call
    /// (2.5 ms on the experts tab, whose ranges follow the ranks at every step). The base class's
    /// own range, which only sizes the field, stays as it is whenever it holds the new range and
    /// sizes the field as the new range would: so after the first call, minimum() and maximum()
    /// may be wider than lowest() and highest().
    void setBounds(double lowest, double highest);
    double lowest() const { return m_lowest; }
    double highest() const { return m_highest; }

    QValidator::State validate(QString& text, int& position) const override;
    void fixup(QString& text) const override;
    double valueFromText(const QString& text) const override;
    QString textFromValue(double value) const override;
    void stepBy(int steps) override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    StepEnabled stepEnabled() const override;

    /// Whether `event` is one of the window's undo or redo keys (Ctrl+Z, Ctrl+Shift+Z, Ctrl+Y
    /// and the platform's Undo and Redo): the spin box leaves those to the window.
    static bool isUndoOrRedoKey(const QKeyEvent* event);

signals:
    /// Typed text that Enter or leaving the box could not take (out of range, finer than the
    /// decimals, not a number): the previous value stays, and this says so.
    void refused(const QString& typed);

protected:
    bool event(QEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void focusOutEvent(QFocusEvent* event) override;

private:
    /// Widths of the texts a field sized for [low, high] must hold: Qt's own measure, then ours.
    std::pair<int, int> widthsFor(double low, double high) const;
    int extraWidth() const;
    /// Emits refused() when the text being committed is not acceptable.
    void checkTypedText();

    bool m_suffixes = false;
    std::function<double(double, int)> m_stepper;
    double m_lowest = 0;
    double m_highest = 99.99; // QDoubleSpinBox's own starting range
    bool m_bounded = false; ///< setBounds() was called
    /// The last few widthsFor() answers. Each one shapes six texts, and Qt asks for the size
    /// hints many times while a tab is laid out (83 times before the first paint).
    struct Widths {
        double low = 0, high = 0;
        int decimals = -1; ///< -1: an empty entry
        QFont font;
        std::pair<int, int> widths;
    };
    mutable std::array<Widths, 4> m_widths;
    mutable std::size_t m_nextWidths = 0; ///< the entry the next new answer replaces
};

/// One labelled input row: label, slider, spin box and unit, kept in step. The control owns the
/// value; slider and spin box only show it. Its starting value is the minimum: call setValue()
/// with the tab's default before connecting to valueChanged, or the tab gets that first change.
///
/// Slider: on a linear scale one position per step when there are at most 10,000 steps,
/// otherwise 1,000 equal steps (values rounded to the step). On a log scale 1,000 steps equal in
/// log10 whose values are rounded to 3 significant digits (more only if a range narrower than
/// about four decades needs them to keep positions distinct). Both ends are exactly the range's
/// minimum and maximum. A value set by typing or setValue() is kept exactly; the slider then
/// sits at the nearest position.
class ParameterControl : public QWidget {
    Q_OBJECT

public:
    explicit ParameterControl(ParameterSpec spec, QWidget* parent = nullptr);

    double value() const { return m_value; }
    /// The value rounded to a whole number (exact for whole values up to 2^53).
    std::int64_t wholeValue() const;
    /// The spec as built, with the current range after setRange().
    const ParameterSpec& spec() const { return m_spec; }

    /// Changes the range (e.g. a maximum that follows another input); the value is clamped into
    /// it and valueChanged is emitted if that changed it. maximum < minimum is read as minimum.
    void setRange(double minimum, double maximum);

    QSlider* slider() const { return m_slider; }
    ParameterSpinBox* spinBox() const { return m_spinBox; }
    QLabel* label() const { return m_label; }
    QLabel* unitLabel() const { return m_unitLabel; }

    /// The value a slider position stands for (positions run 0..slider()->maximum()).
    double valueAtPosition(int position) const;
    /// The slider position for a value: one that stands for exactly this value if there is one,
    /// otherwise the nearest (in log10 on a log scale).
    int positionForValue(double value) const;

    /// Compact: the label on a line of its own over the slider, spin box and unit, for a
    /// narrow column (a classroom screen in large type); otherwise all four in one row.
    void setCompact(bool compact);
    bool isCompact() const { return m_compact; }

    /// Gives the labels, spin boxes and units of the given controls common widths, so controls
    /// stacked in a column line up. Call again after a font change (e.g. projector mode).
    /// Not `shared`: each takes only the widths its own texts need (compact controls, whose
    /// names stand over their rows, in a column kept narrow).
    static void alignColumns(const QList<ParameterControl*>& controls, bool shared = true);

public slots:
    /// Clamps to the range and rounds to the decimals; emits valueChanged only if that differs
    /// from the current value. NaN is ignored.
    void setValue(double value);

signals:
    /// Emitted once per actual change, whether from setValue(), setRange(), the slider or the
    /// spin box. The spin box commits typed text on Enter or when it loses focus.
    void valueChanged(double value);
    /// Typed text was refused; `message` names the control, the range and the value kept. It
    /// is also shown beside the spin box.
    void inputRefused(const QString& message);

private:
    enum class Mapping { ExactSteps, EvenSteps, Log };

    void applyRange(double minimum, double maximum);
    void rebuildMapping();
    double normalized(double value) const;
    double steppedValue(double from, int steps) const;
    void showValueInSpinBox();
    void moveSliderToValue();
    void onSliderMoved(int position);
    void onSpinBoxChanged(double value);
    /// Tooltips and accessible names from the spec.
    void describe();
    /// Says why typed text was not taken, beside the spin box and through inputRefused().
    void onRefused(const QString& typed);
    /// Puts the label, slider, spin box and unit into a new grid, one row or two (setCompact).
    void arrange();

    ParameterSpec m_spec;
    double m_value = 0;
    Mapping m_mapping = Mapping::ExactSteps;
    int m_positions = 0; // slider maximum; positions run 0..m_positions
    double m_logLow = 0; // log10 of the value at position 0 on a log scale
    double m_logHigh = 0; // log10 of the value at the last position
    int m_significantDigits = 3;
    bool m_compact = false;

    QLabel* m_label = nullptr;
    QSlider* m_slider = nullptr;
    ParameterSpinBox* m_spinBox = nullptr;
    QLabel* m_unitLabel = nullptr;
};

} // namespace scalelab::ui
