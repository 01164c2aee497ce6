#include "parametercontrol.h"

#include <QCoreApplication>
#include <QFontMetrics>
#include <QGridLayout>
#include <QKeyEvent>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSignalBlocker>
#include <QSlider>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

namespace scalelab::ui {

namespace {

// Doubles hold every whole number up to 2^53 exactly; past it a typed count would silently
// change, so ranges stop there.
constexpr double kExactLimit = 9007199254740992.0;
// A linear slider gets one position per step up to this many steps...
constexpr int kMaxExactSteps = 10000;
// ...and otherwise (and always on a log scale) this many equal steps.
constexpr int kEvenSteps = 1000;
/// The slider's least length in a compact control, in average characters: enough to drag.
constexpr int kCompactSliderChars = 8;

// The C locale, but with ',' between thousands: "8,030,261,248" is readable from the back row,
// and a fixed locale keeps scenario values and tests the same on every machine.
const QLocale& groupedCLocale()
{
    static const QLocale locale = [] {
        QLocale c = QLocale::c();
        c.setNumberOptions(QLocale::DefaultNumberOptions);
        return c;
    }();
    return locale;
}

// The same rounding QDoubleSpinBox applies, so the spin box never alters a value we hand it.
double roundToDecimals(double value, int decimals)
{
    return QString::number(value, 'f', decimals).toDouble();
}

// Correctly rounded both ways, so 7.00e9 comes out as exactly 7000000000.
double roundToSignificant(double value, int digits)
{
    return QString::number(value, 'e', digits - 1).toDouble();
}

// The label without its mnemonic marker ("&Parameters" -> "Parameters", "R&&D" -> "R&D").
QString withoutMnemonic(const QString& text)
{
    QString plain;
    plain.reserve(text.size());
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text.at(i) == u'&') {
            if (i + 1 < text.size() && text.at(i + 1) == u'&') {
                plain += u'&';
                ++i;
            }
            continue;
        }
        plain += text.at(i);
    }
    return plain;
}

bool isDigit(QChar c)
{
    return c >= u'0' && c <= u'9'; // ASCII only: the C locale's digits, which toDouble() reads
}

bool isBlank(QChar c)
{
    return c == u' ' || (c >= u'\t' && c <= u'\r'); // ASCII white space
}

/// The power of ten of a K/M/B/G/T multiplier ("e3"), or nothing for any other character.
const char* multiplierExponent(QChar c)
{
    switch (c.toUpper().unicode()) {
    case u'K':
        return "e3";
    case u'M':
        return "e6";
    case u'B':
    case u'G':
        return "e9";
    case u'T':
        return "e12";
    default:
        return nullptr;
    }
}

/// Reads typed text from left to right, one part after the other:
///   blanks, a sign, the mantissa, an exponent ("e-3") or (with suffixes) a multiplier that may
///   follow a blank ("175 B"), blanks.
/// The mantissa is digits, either plain or in strict groups of three after the first ("1,234"),
/// then a fraction (".", digits); or a fraction alone (".5"). Each part that stops at the end of
/// the text before it is whole ("1,23", "2e", "-") leaves text that may still become a number.
/// (A hand-written reader rather than a regular expression: every value field reads its text
/// on the way to the first window, where compiling a pattern cost more than the reading.)
class QuantityScanner {
public:
    QuantityScanner(const QString& text, bool suffixes)
        : m_text(text)
        , m_suffixes(suffixes)
    {
    }

    QuantityReading read()
    {
        if (m_text.trimmed().isEmpty())
            return unfinished();
        skipBlanks();
        if (!atEnd() && (here() == u'+' || here() == u'-'))
            m_number += m_text[m_at++];
        if (const auto stop = readMantissa())
            return *stop;
        if (const auto stop = readExponentOrMultiplier())
            return *stop;
        skipBlanks();
        if (!atEnd())
            return refused();
        bool ok = false;
        const double value = m_number.toLatin1().toDouble(&ok);
        if (!ok || !std::isfinite(value)) // too large for a double: typing may shorten it
            return unfinished();
        return {QValidator::Acceptable, value == 0 ? 0.0 : value};
    }

private:
    const QString& m_text;
    bool m_suffixes;
    qsizetype m_at = 0; ///< the next character to read
    QString m_number; ///< what is read so far, as the C locale writes it: "-1234.5e3"

    static QuantityReading unfinished() { return {QValidator::Intermediate, 0}; }
    static QuantityReading refused() { return {QValidator::Invalid, 0}; }

    bool atEnd() const { return m_at == m_text.size(); }
    QChar here() const { return m_text[m_at]; }

    void skipBlanks()
    {
        while (!atEnd() && isBlank(here()))
            ++m_at;
    }

    /// The end of the run of digits that starts at `from`.
    qsizetype digitsEnd(qsizetype from) const
    {
        while (from < m_text.size() && isDigit(m_text[from]))
            ++from;
        return from;
    }

    /// How a part still short of its digits ends the reading: the text may still become a
    /// number when it stops right there, and cannot when something else follows.
    QuantityReading missing() const { return atEnd() ? unfinished() : refused(); }

    std::optional<QuantityReading> readMantissa()
    {
        if (atEnd())
            return unfinished(); // a sign alone
        if (here() == u'.') {
            const qsizetype end = digitsEnd(m_at + 1);
            if (end == m_at + 1) {
                ++m_at;
                return missing();
            }
            m_number += u'0' + m_text.mid(m_at, end - m_at);
            m_at = end;
            return std::nullopt;
        }
        if (!isDigit(here()))
            return refused();
        const qsizetype first = digitsEnd(m_at);
        const bool grouped = first < m_text.size() && m_text[first] == u',';
        if (grouped && first - m_at > 3)
            return refused();
        m_number += m_text.mid(m_at, first - m_at);
        m_at = first;
        while (grouped && !atEnd() && here() == u',') {
            const qsizetype end = digitsEnd(m_at + 1);
            if (end - (m_at + 1) > 3)
                return refused();
            if (end - (m_at + 1) < 3) {
                m_at = end;
                return missing();
            }
            m_number += m_text.mid(m_at + 1, 3);
            m_at = end;
        }
        if (!atEnd() && here() == u'.') {
            const qsizetype end = digitsEnd(m_at + 1);
            m_number += m_text.mid(m_at, end - m_at);
            m_at = end;
        }
        return std::nullopt;
    }

    std::optional<QuantityReading> readExponentOrMultiplier()
    {
        if (!atEnd() && (here() == u'e' || here() == u'E')) {
            qsizetype digits = m_at + 1;
            if (digits < m_text.size() && (m_text[digits] == u'+' || m_text[digits] == u'-'))
                ++digits;
            const qsizetype end = digitsEnd(digits);
            if (end == digits) {
                m_at = end;
                return missing();
            }
            m_number += u'e' + m_text.mid(m_at + 1, end - m_at - 1);
            m_at = end;
            return std::nullopt;
        }
        if (!m_suffixes)
            return std::nullopt;
        qsizetype at = m_at;
        while (at < m_text.size() && isBlank(m_text[at]))
            ++at;
        // Appending the power of ten lets the decimal conversion round once, so "8.03B" is
        // exactly 8030000000 (8.03 * 1e9 in doubles would not be).
        if (at < m_text.size()) {
            if (const char* exponent = multiplierExponent(m_text[at])) {
                m_number += QLatin1StringView(exponent);
                m_at = at + 1;
            }
        }
        return std::nullopt;
    }
};

} // namespace

QuantityReading readQuantity(const QString& text, bool suffixes)
{
    return QuantityScanner(text, suffixes).read();
}

QString formatQuantity(double value, int decimals, bool suffixes)
{
    if (!std::isfinite(value))
        return QString::number(value);
    decimals = std::clamp(decimals, 0, 15);
    if (value == 0)
        value = 0; // no "-0"
    const QString grouped = groupedCLocale().toString(value, 'f', decimals);
    const double magnitude = std::abs(value);
    if (!suffixes || magnitude < 1e3 || magnitude != std::trunc(magnitude))
        return grouped;

    struct Unit {
        double size;
        char16_t letter;
    };
    static constexpr Unit units[] = {{1e12, u'T'}, {1e9, u'B'}, {1e6, u'M'}, {1e3, u'K'}};
    for (const Unit& unit : units) {
        if (magnitude < unit.size)
            continue;
        // The largest unit that fits needs the fewest digits; try 0..3 decimal places in it.
        for (int places = 0; places <= 3; ++places) {
            const QString mantissa = QString::number(magnitude / unit.size, 'f', places);
            const qsizetype significant = mantissa.size() - (places > 0 ? 1 : 0);
            if (significant > 4)
                break;
            const QString candidate = mantissa + QChar(unit.letter);
            if (parseQuantity(candidate, true) == magnitude) {
                const QString shortForm = (value < 0 ? QStringLiteral("-") : QString()) + candidate;
                return shortForm.size() < grouped.size() ? shortForm : grouped;
            }
        }
        break;
    }
    return grouped;
}

std::optional<double> parseQuantity(const QString& text, bool suffixes)
{
    const QuantityReading reading = readQuantity(text, suffixes);
    if (reading.state != QValidator::Acceptable)
        return std::nullopt;
    return reading.value;
}

// ---------------------------------------------------------------------------------------------

ParameterSpinBox::ParameterSpinBox(bool suffixes, QWidget* parent)
    : QDoubleSpinBox(parent)
    , m_suffixes(suffixes)
{
    setLocale(QLocale::c());
}

void ParameterSpinBox::setStepper(std::function<double(double, int)> stepper)
{
    m_stepper = std::move(stepper);
}

void ParameterSpinBox::setBounds(double lowest, double highest)
{
    m_lowest = lowest;
    m_highest = std::max(lowest, highest);
    if (!m_bounded) { // the first bounds are the range: what accessibility tools report
        m_bounded = true;
        setRange(m_lowest, m_highest);
        return;
    }
    // The base range only sizes the field (and clamps what is set, which the bounds already
    // did): keep it while it holds the bounds and measures as they would; otherwise widen it to
    // take the bounds in, or, if that would measure differently, make it the bounds themselves.
    const double low = std::min(minimum(), m_lowest);
    const double high = std::max(maximum(), m_highest);
    const auto wanted = widthsFor(m_lowest, m_highest);
    if (widthsFor(low, high) != wanted)
        setRange(m_lowest, m_highest);
    else if (low != minimum() || high != maximum())
        setRange(low, high);
}

QAbstractSpinBox::StepEnabled ParameterSpinBox::stepEnabled() const
{
    // As the base class, but at the bounds rather than at its own range.
    if (isReadOnly())
        return StepNone;
    StepEnabled enabled = StepNone;
    if (value() > m_lowest)
        enabled |= StepDownEnabled;
    if (value() < m_highest)
        enabled |= StepUpEnabled;
    return enabled;
}

QValidator::State ParameterSpinBox::validate(QString& text, int& position) const
{
    Q_UNUSED(position);
    const QuantityReading reading = readQuantity(text, m_suffixes);
    if (reading.state != QValidator::Acceptable)
        return reading.state;
    // A number outside the range or finer than the decimals may be on its way to a good one,
    // so it stays editable, but Enter will not take it.
    if (reading.value < m_lowest || reading.value > m_highest)
        return QValidator::Intermediate;
    if (roundToDecimals(reading.value, decimals()) != reading.value)
        return QValidator::Intermediate;
    return QValidator::Acceptable;
}

void ParameterSpinBox::checkTypedText()
{
    QString text = lineEdit()->text();
    int position = 0;
    if (validate(text, position) != QValidator::Acceptable)
        emit refused(text.trimmed());
}

bool ParameterSpinBox::isUndoOrRedoKey(const QKeyEvent* event)
{
    const QKeyCombination combination = event->keyCombination();
    const QKeySequence pressed(combination);
    if (event->matches(QKeySequence::Undo) || event->matches(QKeySequence::Redo))
        return true;
    // The window's own redo keys, whatever the platform's Redo is.
    for (const QKeySequence& key :
         {QKeySequence(Qt::CTRL | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z),
          QKeySequence(Qt::CTRL | Qt::Key_Y)})
        if (pressed == key)
            return true;
    return false;
}

bool ParameterSpinBox::event(QEvent* event)
{
    // The line edit inside claims Ctrl+Z and its kin for its own text undo, so the window's
    // undo stack never saw them while a spin box had focus. Give them to the window instead;
    // text typed but not yet entered is taken first, so it becomes the step being undone.
    if (event->type() == QEvent::ShortcutOverride
        && isUndoOrRedoKey(static_cast<QKeyEvent*>(event))) {
        if (cleanText() != textFromValue(value())) {
            checkTypedText();
            interpretText();
        }
        event->ignore();
        return false;
    }
    // Texts that measured alike in one font may not in another: size the field for the bounds.
    if (event->type() == QEvent::FontChange && m_bounded)
        setRange(m_lowest, m_highest);
    return QDoubleSpinBox::event(event);
}

void ParameterSpinBox::keyPressEvent(QKeyEvent* event)
{
    // Reached only when no window action took the key (a spin box on its own): do nothing
    // rather than the line edit's private undo, which the window's stack would not know about.
    if (isUndoOrRedoKey(event)) {
        event->ignore();
        return;
    }
    if (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter)
        checkTypedText();
    QDoubleSpinBox::keyPressEvent(event);
}

void ParameterSpinBox::focusOutEvent(QFocusEvent* event)
{
    checkTypedText();
    QDoubleSpinBox::focusOutEvent(event);
}

void ParameterSpinBox::fixup(QString& text) const
{
    // Deliberately nothing: the base class would drop the commas and turn a mistyped "1,5" into
    // 15. Text that is not acceptable is refused and the previous value comes back instead.
    Q_UNUSED(text);
}

double ParameterSpinBox::valueFromText(const QString& text) const
{
    const QuantityReading reading = readQuantity(text, m_suffixes);
    return reading.state == QValidator::Acceptable ? reading.value : value();
}

QString ParameterSpinBox::textFromValue(double value) const
{
    return formatQuantity(value, decimals(), m_suffixes);
}

void ParameterSpinBox::stepBy(int steps)
{
    // Like the base class: text typed but not yet entered is taken first, and the step is made
    // from it; text that is not acceptable is dropped without stepping. The step stops at the
    // bounds, which may be inside the base class's range.
    double from = value();
    QString typed = cleanText();
    if (typed != textFromValue(from)) {
        int position = 0;
        if (validate(typed, position) != QValidator::Acceptable) {
            setValue(from); // shows the value again
            return;
        }
        from = valueFromText(typed);
    }
    const double to = m_stepper ? m_stepper(from, steps) : from + steps * singleStep();
    setValue(std::clamp(to, m_lowest, m_highest));
    selectAll();
}

std::pair<int, int> ParameterSpinBox::widthsFor(double low, double high) const
{
    // The base class sizes the field for the minimum and maximum as displayed, cut at 18
    // characters (and a space: this field has no prefix, suffix or special text). A value typed
    // exactly can be as long as the maximum written out in full ("8,030,261,248" in a field
    // whose maximum shows as "10T"), so the field wants room for that too.
    const QFont& font = this->font();
    for (const Widths& w : m_widths)
        if (w.decimals == decimals() && w.low == low && w.high == high && w.font == font)
            return w.widths;
    const QFontMetrics metrics(font);
    const auto width = [&metrics](const QString& text) {
        return metrics.horizontalAdvance(text + u' ');
    };
    int measured = 0;
    int wanted = 0;
    for (const double bound : {low, high}) {
        const QString shown = textFromValue(bound);
        measured = std::max(measured, width(shown.left(18)));
        wanted = std::max({wanted, width(shown), width(formatQuantity(bound, decimals(), false))});
    }
    m_widths[m_nextWidths] = {low, high, decimals(), font, {measured, wanted}};
    m_nextWidths = (m_nextWidths + 1) % m_widths.size();
    return {measured, wanted};
}

int ParameterSpinBox::extraWidth() const
{
    const auto [measured, wanted] = widthsFor(minimum(), maximum());
    return std::max(0, wanted - measured);
}

QSize ParameterSpinBox::sizeHint() const
{
    QSize size = QDoubleSpinBox::sizeHint();
    size.rwidth() += extraWidth();
    return size;
}

QSize ParameterSpinBox::minimumSizeHint() const
{
    QSize size = QDoubleSpinBox::minimumSizeHint();
    size.rwidth() += extraWidth();
    return size;
}

// ---------------------------------------------------------------------------------------------

ParameterControl::ParameterControl(ParameterSpec spec, QWidget* parent)
    : QWidget(parent)
    , m_spec(std::move(spec))
{
    m_spec.decimals = std::clamp(m_spec.decimals, 0, 15);
    if (!(m_spec.step > 0) || !std::isfinite(m_spec.step))
        m_spec.step = std::pow(10.0, -m_spec.decimals);

    setObjectName(m_spec.key);
    // Created in Tab order: the slider comes before the spin box. Fonts are left alone so every
    // part follows the application font (and a projector mode that enlarges it).
    m_label = new QLabel(m_spec.label, this);
    m_slider = new QSlider(Qt::Horizontal, this);
    m_spinBox = new ParameterSpinBox(m_spec.suffixes, this);
    m_unitLabel = new QLabel(m_spec.unit, this);

    m_label->setObjectName(m_spec.key + QStringLiteral(".label"));
    m_slider->setObjectName(m_spec.key + QStringLiteral(".slider"));
    m_spinBox->setObjectName(m_spec.key + QStringLiteral(".spin"));
    m_unitLabel->setObjectName(m_spec.key + QStringLiteral(".unit"));
    m_label->setBuddy(m_spinBox);

    // Arrows move one position, Page Up/Down ten, Home/End to the ends (QAbstractSlider's keys).
    m_slider->setFocusPolicy(Qt::StrongFocus);
    m_slider->setSingleStep(1);
    m_slider->setPageStep(10);
    m_slider->setTracking(true);

    m_spinBox->setDecimals(m_spec.decimals);
    m_spinBox->setSingleStep(m_spec.step);
    // Typed text is committed on Enter or focus loss, not per keystroke, so typing "175B" does
    // not first set 1, 17 and 175.
    m_spinBox->setKeyboardTracking(false);
    m_spinBox->setCorrectionMode(QAbstractSpinBox::CorrectToPreviousValue);
    m_spinBox->setAlignment(Qt::AlignRight);
    if (m_spec.scale == ParameterSpec::Scale::Log) {
        // Adding 1 to a count of 1e9 would do nothing visible: on a log scale the spin box
        // arrows move to the next slider position instead.
        m_spinBox->setStepper([this](double from, int steps) { return steppedValue(from, steps); });
    }
    describe();

    arrange();

    applyRange(m_spec.minimum, m_spec.maximum);
    m_value = m_spec.minimum;
    showValueInSpinBox();
    moveSliderToValue();

    connect(m_slider, &QSlider::valueChanged, this, &ParameterControl::onSliderMoved);
    connect(m_spinBox, &QDoubleSpinBox::valueChanged, this, &ParameterControl::onSpinBoxChanged);
    connect(m_spinBox, &ParameterSpinBox::refused, this, &ParameterControl::onRefused);
}

void ParameterControl::describe()
{
    const QString name = withoutMnemonic(m_spec.label);
    QString tip = name;
    if (!m_spec.symbol.isEmpty())
        tip += QStringLiteral(" (%1)").arg(m_spec.symbol);
    if (!m_spec.unit.isEmpty())
        tip += QStringLiteral(", in %1").arg(m_spec.unit);
    if (!m_spec.description.isEmpty())
        tip += QStringLiteral(": %1").arg(m_spec.description);
    for (QWidget* widget : {static_cast<QWidget*>(this), static_cast<QWidget*>(m_label),
                            static_cast<QWidget*>(m_slider), static_cast<QWidget*>(m_spinBox),
                            static_cast<QWidget*>(m_unitLabel)})
        widget->setToolTip(tip);
    m_slider->setAccessibleName(name);
    m_slider->setAccessibleDescription(m_spec.description);
    m_spinBox->setAccessibleName(tr("%1 value").arg(name));
    m_spinBox->setAccessibleDescription(m_spec.description);
}

void ParameterControl::onRefused(const QString& typed)
{
    const QString message =
        tr("%1: %2 is not a value in %3 to %4; it stays %5")
            .arg(withoutMnemonic(m_spec.label),
                 typed.isEmpty() ? tr("an empty box") : QStringLiteral("\u201c%1\u201d").arg(typed),
                 m_spinBox->textFromValue(m_spinBox->lowest()),
                 m_spinBox->textFromValue(m_spinBox->highest()), m_spinBox->textFromValue(m_value));
    QToolTip::showText(m_spinBox->mapToGlobal(QPoint(0, m_spinBox->height())), message, m_spinBox,
                       {}, 6000);
    emit inputRefused(message);
}

std::int64_t ParameterControl::wholeValue() const
{
    return static_cast<std::int64_t>(std::llround(m_value));
}

void ParameterControl::setValue(double value)
{
    if (std::isnan(value))
        return;
    const double next = normalized(value);
    if (next == m_value)
        return;
    m_value = next;
    showValueInSpinBox();
    moveSliderToValue();
    emit valueChanged(m_value);
}

void ParameterControl::setRange(double minimum, double maximum)
{
    const double previous = m_value;
    applyRange(minimum, maximum);
    m_value = normalized(m_value);
    showValueInSpinBox();
    moveSliderToValue();
    if (m_value != previous)
        emit valueChanged(m_value);
}

double ParameterControl::valueAtPosition(int position) const
{
    position = std::clamp(position, 0, m_positions);
    // The ends are the range itself, not a rounded approximation of it.
    if (position == 0)
        return m_spec.minimum;
    if (position == m_positions)
        return m_spec.maximum;
    const double low = m_spec.minimum;
    const double high = m_spec.maximum;
    double value = low;
    switch (m_mapping) {
    case Mapping::ExactSteps:
        value = low + position * m_spec.step;
        break;
    case Mapping::EvenSteps:
        value = low + std::round(position * (high - low) / m_positions / m_spec.step) * m_spec.step;
        break;
    case Mapping::Log:
        value = roundToSignificant(
            std::pow(10.0, m_logLow + (m_logHigh - m_logLow) * position / m_positions),
            m_significantDigits);
        break;
    }
    return normalized(value);
}

int ParameterControl::positionForValue(double value) const
{
    if (m_positions == 0 || std::isnan(value))
        return 0;
    const double low = m_spec.minimum;
    const double high = m_spec.maximum;
    double at = 0;
    switch (m_mapping) {
    case Mapping::ExactSteps:
        at = (value - low) / m_spec.step;
        break;
    case Mapping::EvenSteps:
        at = (value - low) / (high - low) * m_positions;
        break;
    case Mapping::Log:
        at = value > 0 ? (std::log10(value) - m_logLow) / (m_logHigh - m_logLow) * m_positions : 0;
        break;
    }
    const int nearest = at <= 0 ? 0
        : at >= m_positions     ? m_positions
                                : static_cast<int>(std::lround(at));
    // Rounding can put the position that stands for exactly this value next to the nearest one.
    if (valueAtPosition(nearest) == value)
        return nearest;
    for (const int neighbour : {nearest - 1, nearest + 1}) {
        if (neighbour >= 0 && neighbour <= m_positions && valueAtPosition(neighbour) == value)
            return neighbour;
    }
    return nearest;
}

void ParameterControl::setCompact(bool compact)
{
    if (compact == m_compact)
        return;
    m_compact = compact;
    arrange();
}

void ParameterControl::arrange()
{
    // A new grid each time: the widgets stay, only where they sit changes.
    delete layout();
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    if (m_compact) {
        // The name over its row, which then needs no room for it, and the unit over the
        // value, like a column's heading (beside it, it would widen the row by a word): the
        // slider keeps enough length to be dragged.
        grid->setVerticalSpacing(fontMetrics().height() / 8);
        grid->addWidget(m_label, 0, 0);
        grid->addWidget(m_unitLabel, 0, 1, Qt::AlignRight | Qt::AlignBottom);
        grid->addWidget(m_slider, 1, 0);
        grid->addWidget(m_spinBox, 1, 1);
        grid->setColumnStretch(0, 1);
        m_slider->setMinimumWidth(kCompactSliderChars * fontMetrics().averageCharWidth());
    } else {
        grid->addWidget(m_label, 0, 0);
        grid->addWidget(m_slider, 0, 1);
        grid->addWidget(m_spinBox, 0, 2);
        grid->addWidget(m_unitLabel, 0, 3);
        grid->setColumnStretch(1, 1);
        m_slider->setMinimumWidth(0);
    }
}

void ParameterControl::alignColumns(const QList<ParameterControl*>& controls, bool shared)
{
    int labelWidth = 0;
    int spinBoxWidth = 0;
    int unitWidth = 0;
    // A label's size hint includes its minimum width: measure without the last alignment.
    for (ParameterControl* control : controls)
        if (control)
            for (QWidget* w : {static_cast<QWidget*>(control->m_label),
                               static_cast<QWidget*>(control->m_spinBox),
                               static_cast<QWidget*>(control->m_unitLabel)}) {
                w->setMinimumWidth(0);
                // A label keeps the size hint it measured under its old minimum width until
                // its contents change: told they did, it measures its text again.
                if (qobject_cast<QLabel*>(w)) {
                    QEvent changed(QEvent::ContentsRectChange);
                    QCoreApplication::sendEvent(w, &changed);
                }
            }
    if (!shared)
        return;
    for (const ParameterControl* control : controls) {
        if (!control)
            continue;
        labelWidth = std::max(labelWidth, control->m_label->sizeHint().width());
        spinBoxWidth = std::max(spinBoxWidth, control->m_spinBox->sizeHint().width());
        unitWidth = std::max(unitWidth, control->m_unitLabel->sizeHint().width());
    }
    for (ParameterControl* control : controls) {
        if (!control)
            continue;
        // A character to spare: a label's size hint can fall a pixel or two short of its
        // drawn text, and the slider beside it then covers the last letter.
        control->m_label->setMinimumWidth(labelWidth
                                          + control->m_label->fontMetrics().averageCharWidth());
        control->m_spinBox->setMinimumWidth(spinBoxWidth);
        control->m_unitLabel->setMinimumWidth(unitWidth);
    }
}

void ParameterControl::applyRange(double minimum, double maximum)
{
    const auto limited = [this](double bound) {
        if (std::isnan(bound))
            bound = 0;
        return roundToDecimals(std::clamp(bound, -kExactLimit, kExactLimit), m_spec.decimals);
    };
    m_spec.minimum = limited(minimum);
    m_spec.maximum = std::max(m_spec.minimum, limited(maximum));
    rebuildMapping();
    {
        const QSignalBlocker blocker(m_slider);
        m_slider->setRange(0, m_positions);
    }
    const QSignalBlocker blocker(m_spinBox);
    m_spinBox->setBounds(m_spec.minimum, m_spec.maximum);
}

void ParameterControl::rebuildMapping()
{
    const double low = m_spec.minimum;
    const double high = m_spec.maximum;
    m_significantDigits = 3;
    m_mapping = Mapping::ExactSteps;
    m_positions = 0;
    if (high == low)
        return;

    if (m_spec.scale == ParameterSpec::Scale::Log) {
        // A log scale cannot start at zero: it then starts at the smallest positive value the
        // decimals can show, and position 0 alone stands for the minimum.
        const double start = low > 0 ? low : std::pow(10.0, -m_spec.decimals);
        if (high > start) {
            m_mapping = Mapping::Log;
            m_positions = kEvenSteps;
            m_logLow = std::log10(start);
            m_logHigh = std::log10(high);
            // Enough digits that rounding moves a value by less than half a position, so
            // positions stay distinct and a slider value leads back to its own position.
            const double spacing = (m_logHigh - m_logLow) / m_positions;
            while (m_significantDigits < 15
                   && std::log10(1 + 0.5 * std::pow(10.0, 1 - m_significantDigits))
                       >= 0.45 * spacing)
                ++m_significantDigits;
            return;
        }
        // No positive span to spread in log10: fall back to a linear slider.
    }

    const double steps = (high - low) / m_spec.step;
    const double whole = std::round(steps);
    // (0.3 - 0) / 0.1 is 2.9999999999999996 in doubles, which is three steps, not four.
    const double count =
        std::abs(steps - whole) <= 1e-9 * std::max(1.0, steps) ? whole : std::ceil(steps);
    if (count <= kMaxExactSteps) {
        m_mapping = Mapping::ExactSteps;
        m_positions = static_cast<int>(count);
    } else {
        m_mapping = Mapping::EvenSteps;
        m_positions = kEvenSteps;
    }
}

double ParameterControl::normalized(double value) const
{
    if (std::isnan(value))
        return m_value;
    value = std::clamp(value, m_spec.minimum, m_spec.maximum);
    value = std::clamp(roundToDecimals(value, m_spec.decimals), m_spec.minimum, m_spec.maximum);
    return value == 0 ? 0.0 : value;
}

double ParameterControl::steppedValue(double from, int steps) const
{
    if (steps == 0 || m_positions == 0)
        return normalized(from);
    long long position = positionForValue(from);
    if (steps > 0) {
        // The first position strictly above `from`, then steps - 1 further.
        while (position > 0 && valueAtPosition(static_cast<int>(position - 1)) > from)
            --position;
        while (position <= m_positions && valueAtPosition(static_cast<int>(position)) <= from)
            ++position;
        if (position > m_positions)
            return m_spec.maximum;
        position = std::min<long long>(m_positions, position + steps - 1);
    } else {
        while (position < m_positions && valueAtPosition(static_cast<int>(position + 1)) < from)
            ++position;
        while (position >= 0 && valueAtPosition(static_cast<int>(position)) >= from)
            --position;
        if (position < 0)
            return m_spec.minimum;
        position = std::max<long long>(0, position + steps + 1);
    }
    return valueAtPosition(static_cast<int>(position));
}

void ParameterControl::showValueInSpinBox()
{
    const QSignalBlocker blocker(m_spinBox);
    m_spinBox->setValue(m_value);
}

void ParameterControl::moveSliderToValue()
{
    // Among positions that stand for the same value, keep the one the user chose.
    if (valueAtPosition(m_slider->value()) == m_value)
        return;
    const QSignalBlocker blocker(m_slider);
    m_slider->setValue(positionForValue(m_value));
}

void ParameterControl::onSliderMoved(int position)
{
    const double next = valueAtPosition(position);
    if (next == m_value)
        return;
    m_value = next;
    showValueInSpinBox();
    emit valueChanged(m_value);
}

void ParameterControl::onSpinBoxChanged(double value)
{
    const double next = normalized(value);
    if (next == m_value)
        return;
    m_value = next;
    if (m_spinBox->value() != m_value)
        showValueInSpinBox();
    moveSliderToValue();
    emit valueChanged(m_value);
}

} // namespace scalelab::ui
