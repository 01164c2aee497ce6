// The shared parameter control, driven the way a student or teacher would: keys on the slider,
// text typed into the spin box, plus the slider mapping checked position by position.
#include "parametercontrol.h"

#include <QApplication>
#include <QLabel>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSlider>
#include <QTest>
#include <QVBoxLayout>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

using scalelab::ui::formatQuantity;
using scalelab::ui::ParameterControl;
using scalelab::ui::ParameterSpec;
using scalelab::ui::ParameterSpinBox;
using scalelab::ui::parseQuantity;
using scalelab::ui::QuantityReading;
using scalelab::ui::readQuantity;

namespace {

constexpr double kTwoPow53 = 9007199254740992.0;

// QCOMPARE on doubles is fuzzy; these values must match to the last bit.
#define EXACT_COMPARE(actual, expected)                                                            \
    do {                                                                                           \
        const double a_ = (actual);                                                                \
        const double e_ = (expected);                                                              \
        QVERIFY2(a_ == e_,                                                                         \
                 qPrintable(QStringLiteral("%1 is %2, expected %3")                                \
                                .arg(QStringLiteral(#actual))                                      \
                                .arg(a_, 0, 'g', 17)                                               \
                                .arg(e_, 0, 'g', 17)));                                            \
    } while (false)

const QString kParametersDescription =
    QStringLiteral("How many weights the model has, counted one by one.");

// The specs the tests use, by a short name usable in data rows.
ParameterSpec specFor(const QString& kind)
{
    using Scale = ParameterSpec::Scale;
    if (kind == u"params")
        return {QStringLiteral("memory.parameters"),
                QStringLiteral("&Parameters"),
                QStringLiteral("P"),
                QStringLiteral("parameters"),
                kParametersDescription,
                1e6,
                1e13,
                Scale::Log,
                0,
                1,
                true};
    if (kind == u"tokens") // 999,999 steps: too many for one position each
        return {QStringLiteral("memory.tokens"),
                QStringLiteral("&Tokens"),
                QStringLiteral("T"),
                QStringLiteral("tokens"),
                QStringLiteral("Tokens in one micro-batch."),
                1,
                1e6,
                Scale::Linear,
                0,
                1,
                true};
    if (kind == u"layers") // 127 steps
        return {QStringLiteral("model.layers"),
                QStringLiteral("&Layers"),
                QStringLiteral("L"),
                QStringLiteral("layers"),
                QStringLiteral("Transformer blocks in the model."),
                1,
                128,
                Scale::Linear,
                0,
                1,
                false};
    if (kind == u"half") // 20 steps of 0.5
        return {QStringLiteral("fp8.scale"),
                QStringLiteral("&Scale"),
                QStringLiteral("s"),
                QStringLiteral("units"),
                QStringLiteral("A scale."),
                0,
                10,
                Scale::Linear,
                1,
                0.5,
                false};
    if (kind == u"fraction") // 400 steps of 0.25, two decimals
        return {QStringLiteral("x.fraction"),
                QStringLiteral("&Fraction"),
                QStringLiteral("f"),
                QStringLiteral("percent"),
                QStringLiteral("A share."),
                0,
                100,
                Scale::Linear,
                2,
                0.25,
                false};
    if (kind == u"thirds") // 0.3 / 0.1 is not exactly 3 in doubles
        return {QStringLiteral("x.thirds"),
                QStringLiteral("T&hirds"),
                QStringLiteral("t"),
                QStringLiteral("units"),
                QStringLiteral("Tenths."),
                0,
                0.3,
                Scale::Linear,
                1,
                0.1,
                false};
    if (kind == u"tenk") // exactly 10,000 steps: still one position each
        return {QStringLiteral("x.tenk"),
                QStringLiteral("&Ten"),
                QStringLiteral("n"),
                QStringLiteral("items"),
                QStringLiteral("Items."),
                0,
                10000,
                Scale::Linear,
                0,
                1,
                false};
    if (kind == u"tenk1") // 10,001 steps: one too many
        return {QStringLiteral("x.tenk1"),
                QStringLiteral("&Ten"),
                QStringLiteral("n"),
                QStringLiteral("items"),
                QStringLiteral("Items."),
                0,
                10001,
                Scale::Linear,
                0,
                1,
                false};
    if (kind == u"wide") // 1e6 steps, no suffixes
        return {QStringLiteral("memory.hidden"),
                QStringLiteral("&Hidden"),
                QStringLiteral("h"),
                QStringLiteral("values"),
                QStringLiteral("Width."),
                0,
                1e6,
                Scale::Linear,
                0,
                1,
                false};
    if (kind == u"exact") // every whole number a double holds exactly
        return {QStringLiteral("x.exact"),
                QStringLiteral("&Count"),
                QStringLiteral("N"),
                QStringLiteral("items"),
                QStringLiteral("Count."),
                0,
                kTwoPow53,
                Scale::Linear,
                0,
                1,
                true};
    qFatal("unknown spec kind");
    return {};
}

// Rounded to 3 significant digits through the standard library's own decimal conversions, so
// the expectation does not share the control's (Qt's) number code.
double round3(double value)
{
    char buffer[64];
    const auto written =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific, 2);
    double rounded = 0;
    std::from_chars(buffer, written.ptr, rounded);
    return rounded;
}

// The log scale of "params" as the spec describes it: 1,000 equal steps in log10 from 1e6 to
// 1e13, values rounded to 3 significant digits, both ends exact.
double paramsAtPosition(int position)
{
    if (position == 0)
        return 1e6;
    if (position == 1000)
        return 1e13;
    return round3(std::pow(10.0, 6.0 + 7.0 * position / 1000.0));
}

int paramsNearestPosition(double value)
{
    return static_cast<int>(std::lround((std::log10(value) - 6.0) / 7.0 * 1000.0));
}

// A control in a shown, active window, as in the application (focus and shortcuts need one).
struct Shown {
    QWidget window;
    ParameterControl* control = nullptr;

    explicit Shown(const ParameterSpec& spec)
    {
        auto* layout = new QVBoxLayout(&window);
        control = new ParameterControl(spec, &window);
        layout->addWidget(control);
        window.show();
        window.activateWindow();
    }
};

// The reading of typed text as a regular expression says it, with partial matches: the spin
// boxes read their text this way until the reader was written by hand (a pattern cost more to
// compile on the way to the first window than all the reading after it). Sign, mantissa
// (digits in strict groups of three, or plain), then an exponent or, with suffixes, a K/M/B/G/T
// multiplier that may follow a space.
QuantityReading readByPattern(const QString& text, bool suffixes)
{
    static const QString mantissa =
        QStringLiteral(R"(((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+))");
    static const QRegularExpression plain(
        QStringLiteral(R"(^\s*([+-]?)%1(?:[eE]([+-]?\d+))?\s*$)").arg(mantissa));
    static const QRegularExpression withSuffix(
        QStringLiteral(R"(^\s*([+-]?)%1(?:[eE]([+-]?\d+)|\s*([kKmMbBgGtT]))?\s*$)").arg(mantissa));
    if (text.trimmed().isEmpty())
        return {QValidator::Intermediate, 0};
    const QRegularExpressionMatch match =
        (suffixes ? withSuffix : plain)
            .match(text, 0, QRegularExpression::PartialPreferCompleteMatch);
    if (match.hasPartialMatch())
        return {QValidator::Intermediate, 0};
    if (!match.hasMatch())
        return {QValidator::Invalid, 0};
    QString digits = match.captured(2);
    digits.remove(u',');
    if (digits.endsWith(u'.'))
        digits.chop(1);
    if (digits.startsWith(u'.'))
        digits.prepend(u'0');
    QString number = match.captured(1) + digits;
    if (match.capturedLength(3) > 0)
        number += u'e' + match.captured(3);
    else if (match.capturedLength(4) > 0) {
        const QChar multiplier = match.captured(4).toUpper().at(0);
        number += multiplier == u'K' ? "e3"
            : multiplier == u'M'     ? "e6"
            : multiplier == u'T'     ? "e12"
                                     : "e9";
    }
    bool ok = false;
    const double value = number.toLatin1().toDouble(&ok);
    if (!ok || !std::isfinite(value))
        return {QValidator::Intermediate, 0};
    return {QValidator::Acceptable, value == 0 ? 0.0 : value};
}

// Whether the reader and the pattern agree on `text`, in both modes; the first disagreement
// is written to `why`.
bool readsAsThePattern(const QString& text, QString* why)
{
    for (const bool suffixes : {false, true}) {
        const QuantityReading ours = readQuantity(text, suffixes);
        const QuantityReading pattern = readByPattern(text, suffixes);
        if (ours.state != pattern.state
            || (ours.state == QValidator::Acceptable && ours.value != pattern.value)) {
            *why = QStringLiteral("\"%1\" (suffixes %2): read as state %3 value %4, the pattern "
                                  "says state %5 value %6")
                       .arg(text)
                       .arg(suffixes)
                       .arg(int(ours.state))
                       .arg(ours.value, 0, 'g', 17)
                       .arg(int(pattern.state))
                       .arg(pattern.value, 0, 'g', 17);
            return false;
        }
    }
    return true;
}

} // namespace

class TestParameterControl : public QObject {
    Q_OBJECT

private slots:
    void sliderKeys_data();
    void sliderKeys();
    void tabReachesSliderThenSpinBox();
    void typing_data();
    void typing();
    void typedCountStaysExact();
    void invalidText_data();
    void invalidText();
    void validatorStates_data();
    void validatorStates();
    void logMappingEveryPosition();
    void narrowLogRanges_data();
    void narrowLogRanges();
    void sliderKeepsItsPlaceAmongEqualValues();
    void linearMapping_data();
    void linearMapping();
    void spinBoxArrows();
    void setRangeClampsAndEmitsOnce();
    void aRangeThatSizesTheFieldAlikeLaysNothingOut();
    void setValueEmitsOnlyOnChange();
    void oneSignalPerUserChange();
    void wholeNumbersUpTo2Pow53();
    void formatting_data();
    void formatting();
    void parsing_data();
    void parsing();
    void readingAgreesWithThePattern();
    void accessibility();
    void mnemonicFocusesSpinBox();
    void followsApplicationFont();
    void alignColumns();
};

void TestParameterControl::sliderKeys_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<double>("start");
    QTest::addColumn<int>("key");
    QTest::addColumn<double>("expected");
    QTest::addColumn<int>("emitted");

    // One position per whole layer.
    QTest::newRow("layers right") << "layers" << 64.0 << int(Qt::Key_Right) << 65.0 << 1;
    QTest::newRow("layers left") << "layers" << 64.0 << int(Qt::Key_Left) << 63.0 << 1;
    QTest::newRow("layers up") << "layers" << 64.0 << int(Qt::Key_Up) << 65.0 << 1;
    QTest::newRow("layers page up") << "layers" << 64.0 << int(Qt::Key_PageUp) << 74.0 << 1;
    QTest::newRow("layers page down") << "layers" << 64.0 << int(Qt::Key_PageDown) << 54.0 << 1;
    QTest::newRow("layers end") << "layers" << 64.0 << int(Qt::Key_End) << 128.0 << 1;
    QTest::newRow("layers home") << "layers" << 64.0 << int(Qt::Key_Home) << 1.0 << 1;
    QTest::newRow("layers page up clamps")
        << "layers" << 125.0 << int(Qt::Key_PageUp) << 128.0 << 1;
    QTest::newRow("layers end at end") << "layers" << 128.0 << int(Qt::Key_End) << 128.0 << 0;
    QTest::newRow("layers home at home") << "layers" << 1.0 << int(Qt::Key_Home) << 1.0 << 0;

    // Steps of 0.5 with one decimal.
    QTest::newRow("half right") << "half" << 5.0 << int(Qt::Key_Right) << 5.5 << 1;
    QTest::newRow("half page up") << "half" << 5.0 << int(Qt::Key_PageUp) << 10.0 << 1;
    QTest::newRow("half page down") << "half" << 5.0 << int(Qt::Key_PageDown) << 0.0 << 1;

    // 1e6 steps: the slider moves in thousandths of the range.
    QTest::newRow("wide right") << "wide" << 500000.0 << int(Qt::Key_Right) << 501000.0 << 1;
    QTest::newRow("wide page up") << "wide" << 500000.0 << int(Qt::Key_PageUp) << 510000.0 << 1;
    QTest::newRow("wide page down") << "wide" << 500000.0 << int(Qt::Key_PageDown) << 490000.0 << 1;
    QTest::newRow("wide end") << "wide" << 500000.0 << int(Qt::Key_End) << 1e6 << 1;
    QTest::newRow("wide home") << "wide" << 500000.0 << int(Qt::Key_Home) << 0.0 << 1;

    // Log scale, starting from 7e9, which is not itself a slider position.
    const int at = paramsNearestPosition(7e9);
    QTest::newRow("params right") << "params" << 7e9 << int(Qt::Key_Right)
                                  << paramsAtPosition(at + 1) << 1;
    QTest::newRow("params left") << "params" << 7e9 << int(Qt::Key_Left) << paramsAtPosition(at - 1)
                                 << 1;
    QTest::newRow("params page up")
        << "params" << 7e9 << int(Qt::Key_PageUp) << paramsAtPosition(at + 10) << 1;
    QTest::newRow("params page down")
        << "params" << 7e9 << int(Qt::Key_PageDown) << paramsAtPosition(at - 10) << 1;
    QTest::newRow("params end") << "params" << 7e9 << int(Qt::Key_End) << 1e13 << 1;
    QTest::newRow("params home") << "params" << 7e9 << int(Qt::Key_Home) << 1e6 << 1;
}

void TestParameterControl::sliderKeys()
{
    QFETCH(QString, kind);
    QFETCH(double, start);
    QFETCH(int, key);
    QFETCH(double, expected);
    QFETCH(int, emitted);

    Shown shown(specFor(kind));
    ParameterControl* control = shown.control;
    control->setValue(start);
    EXACT_COMPARE(control->value(), start);

    QSignalSpy spy(control, &ParameterControl::valueChanged);
    control->slider()->setFocus();
    QTest::keyClick(control->slider(), Qt::Key(key));

    EXACT_COMPARE(control->value(), expected);
    EXACT_COMPARE(control->spinBox()->value(), expected);
    QCOMPARE(spy.count(), emitted);
    if (emitted > 0)
        EXACT_COMPARE(spy.at(0).at(0).toDouble(), expected);
}

void TestParameterControl::tabReachesSliderThenSpinBox()
{
    Shown shown(specFor("params"));
    QVERIFY(QTest::qWaitForWindowActive(&shown.window));
    ParameterControl* control = shown.control;
    QVERIFY(control->slider()->focusPolicy() & Qt::TabFocus);
    QVERIFY(control->spinBox()->focusPolicy() & Qt::TabFocus);

    control->slider()->setFocus(Qt::TabFocusReason);
    QCOMPARE(QApplication::focusWidget(), control->slider());
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
    QWidget* focused = QApplication::focusWidget();
    QVERIFY(focused == control->spinBox() || control->spinBox()->isAncestorOf(focused));
}

void TestParameterControl::typing_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("typed");
    QTest::addColumn<double>("expected");
    QTest::addColumn<QString>("shown");

    QTest::newRow("7B") << "params"
                        << "7B" << 7e9 << "7B";
    QTest::newRow("7b lower case") << "params"
                                   << "7b" << 7e9 << "7B";
    QTest::newRow("7G") << "params"
                        << "7G" << 7e9 << "7B";
    QTest::newRow("1.5T") << "params"
                          << "1.5T" << 1.5e12 << "1.5T";
    QTest::newRow("175 B") << "params"
                           << "175 B" << 175e9 << "175B";
    QTest::newRow("8.03B") << "params"
                           << "8.03B" << 8030000000.0 << "8.03B";
    QTest::newRow("2.5m") << "params"
                          << "2.5m" << 2500000.0 << "2.5M";
    QTest::newRow("8030261248") << "params"
                                << "8030261248" << 8030261248.0 << "8,030,261,248";
    QTest::newRow("grouped 8,030,261,248") << "params"
                                           << "8,030,261,248" << 8030261248.0 << "8,030,261,248";
    QTest::newRow("7,000,000,000") << "params"
                                   << "7,000,000,000" << 7e9 << "7B";
    QTest::newRow("7e9") << "params"
                         << "7e9" << 7e9 << "7B";
    QTest::newRow("1.2345B, five digits") << "params"
                                          << "1.2345B" << 1234500000.0 << "1,234,500,000";
    QTest::newRow("10T, the maximum") << "params"
                                      << "10T" << 1e13 << "10T";
    QTest::newRow("1M, the minimum") << "params"
                                     << "1M" << 1e6 << "1M";

    QTest::newRow("8k") << "tokens"
                        << "8k" << 8000.0 << "8K";
    QTest::newRow("1.5K") << "tokens"
                          << "1.5K" << 1500.0 << "1.5K";
    QTest::newRow("4096 stays grouped") << "tokens"
                                        << "4096" << 4096.0 << "4,096";
    QTest::newRow("999") << "tokens"
                         << "999" << 999.0 << "999";

    QTest::newRow("no suffixes") << "wide"
                                 << "12,288" << 12288.0 << "12,288";
    QTest::newRow("two decimals") << "fraction"
                                  << "12.5" << 12.5 << "12.50";
    QTest::newRow("quarter") << "fraction"
                             << ".25" << 0.25 << "0.25";
}

void TestParameterControl::typing()
{
    QFETCH(QString, kind);
    QFETCH(QString, typed);
    QFETCH(double, expected);
    QFETCH(QString, shown);

    const ParameterSpec spec = specFor(kind);
    Shown window(spec);
    ParameterControl* control = window.control;
    control->setValue(expected == spec.minimum ? spec.maximum : spec.minimum);
    QSignalSpy spy(control, &ParameterControl::valueChanged);

    control->spinBox()->setFocus();
    control->spinBox()->selectAll();
    QTest::keyClicks(control->spinBox(), typed);
    QCOMPARE(spy.count(), 0); // nothing is committed before Enter
    QTest::keyClick(control->spinBox(), Qt::Key_Enter);

    EXACT_COMPARE(control->value(), expected);
    QCOMPARE(spy.count(), 1);
    EXACT_COMPARE(spy.at(0).at(0).toDouble(), expected);
    QCOMPARE(control->spinBox()->text(), shown);
    EXACT_COMPARE(control->valueAtPosition(control->slider()->value()),
                  control->valueAtPosition(control->positionForValue(expected)));
}

void TestParameterControl::typedCountStaysExact()
{
    Shown shown(specFor("params"));
    ParameterControl* control = shown.control;
    QSignalSpy spy(control, &ParameterControl::valueChanged);

    control->spinBox()->setFocus();
    control->spinBox()->selectAll();
    QTest::keyClicks(control->spinBox(), QStringLiteral("8030261248"));
    QTest::keyClick(control->spinBox(), Qt::Key_Return);

    QCOMPARE(control->wholeValue(), Q_INT64_C(8030261248));
    QCOMPARE(spy.count(), 1);
    // The slider sits at the nearest log position, but moving it there changed nothing.
    const int expectedPosition = paramsNearestPosition(8030261248.0);
    QCOMPARE(control->slider()->value(), expectedPosition);
    const double here = std::log10(8030261248.0);
    const double distance = std::abs(std::log10(paramsAtPosition(expectedPosition)) - here);
    QVERIFY(distance <= std::abs(std::log10(paramsAtPosition(expectedPosition - 1)) - here));
    QVERIFY(distance <= std::abs(std::log10(paramsAtPosition(expectedPosition + 1)) - here));
    QCoreApplication::processEvents();
    QCOMPARE(control->wholeValue(), Q_INT64_C(8030261248));
    QCOMPARE(spy.count(), 1);

    // The same through setValue.
    control->setValue(1e6);
    control->setValue(8030261248.0);
    QCOMPARE(control->wholeValue(), Q_INT64_C(8030261248));
    QCOMPARE(control->slider()->value(), expectedPosition);
}

void TestParameterControl::invalidText_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("typed");

    QTest::newRow("letters") << "params"
                             << "abc";
    QTest::newRow("unknown suffix") << "params"
                                    << "7X";
    QTest::newRow("two points") << "params"
                                << "1.2.3";
    QTest::newRow("broken group") << "params"
                                  << "1,5";
    QTest::newRow("broken group, 35 would fit") << "layers"
                                                << "3,5";
    QTest::newRow("two suffixes") << "params"
                                  << "7BB";
    QTest::newRow("above maximum") << "params"
                                   << "20T";
    QTest::newRow("below minimum") << "params"
                                   << "5";
    QTest::newRow("negative") << "params"
                              << "-7B";
    QTest::newRow("half an exponent") << "params"
                                      << "7e";
    QTest::newRow("emptied") << "params"
                             << "";
    QTest::newRow("fraction of a layer") << "layers"
                                         << "12.5";
    QTest::newRow("suffix where none is allowed") << "layers"
                                                  << "k";
    QTest::newRow("too many layers") << "layers"
                                     << "200";
    QTest::newRow("three decimals") << "fraction"
                                    << "0.125";
}

void TestParameterControl::invalidText()
{
    QFETCH(QString, kind);
    QFETCH(QString, typed);

    Shown shown(specFor(kind));
    ParameterControl* control = shown.control;
    const double start = kind == u"params" ? 7e9 : 12;
    control->setValue(start);
    const QString before = control->spinBox()->text();
    QSignalSpy spy(control, &ParameterControl::valueChanged);
    QSignalSpy refused(control, &ParameterControl::inputRefused);

    control->spinBox()->setFocus();
    control->spinBox()->selectAll();
    if (typed.isEmpty())
        QTest::keyClick(control->spinBox(), Qt::Key_Backspace);
    else
        QTest::keyClicks(control->spinBox(), typed);
    // Keys the validator refuses never reach the box; whatever did reach it is refused on
    // Enter, with a message that names the control, its range and the value kept.
    const bool typedSomething = control->spinBox()->text() != before;
    QTest::keyClick(control->spinBox(), Qt::Key_Enter);

    EXACT_COMPARE(control->value(), start);
    QCOMPARE(spy.count(), 0);
    QCOMPARE(control->spinBox()->text(), before);
    QCOMPARE(refused.count(), typedSomething ? 1 : 0);
    if (typedSomething) {
        const QString message = refused.first().first().toString();
        const ParameterSpinBox* box = control->spinBox();
        QVERIFY2(message.contains(box->textFromValue(box->lowest()) + " to "
                                  + box->textFromValue(box->highest())),
                 qPrintable(message));
        QVERIFY2(message.endsWith("it stays " + before), qPrintable(message));
    }
}

void TestParameterControl::validatorStates_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("state");

    const int invalid = QValidator::Invalid;
    const int intermediate = QValidator::Intermediate;
    const int acceptable = QValidator::Acceptable;
    QTest::newRow("7B") << "params"
                        << "7B" << acceptable;
    QTest::newRow("spaces") << "params"
                            << " 175 b " << acceptable;
    QTest::newRow("7e9") << "params"
                         << "7e9" << acceptable;
    QTest::newRow("7E+9") << "params"
                          << "7E+9" << acceptable;
    QTest::newRow("empty") << "params"
                           << "" << intermediate;
    QTest::newRow("sign only") << "params"
                               << "-" << intermediate;
    QTest::newRow("below the minimum so far") << "params"
                                              << "7" << intermediate;
    QTest::newRow("group being typed") << "params"
                                       << "7,00" << intermediate;
    QTest::newRow("exponent being typed") << "params"
                                          << "7e" << intermediate;
    QTest::newRow("above the maximum") << "params"
                                       << "20T" << intermediate;
    QTest::newRow("letters") << "params"
                             << "abc" << invalid;
    QTest::newRow("unknown suffix") << "params"
                                    << "7X" << invalid;
    QTest::newRow("two points") << "params"
                                << "1.2.3" << invalid;
    QTest::newRow("two suffixes") << "params"
                                  << "7BB" << invalid;
    QTest::newRow("group of four") << "params"
                                   << "7,0000" << invalid;
    QTest::newRow("exponent and suffix") << "params"
                                         << "1e3K" << invalid;
    QTest::newRow("suffix without suffixes") << "layers"
                                             << "1k" << invalid;
    QTest::newRow("whole layers") << "layers"
                                  << "12" << acceptable;
    QTest::newRow("fraction of a layer") << "layers"
                                         << "12.5" << intermediate;
    QTest::newRow("1.5e1 layers is whole") << "layers"
                                           << "1.5e1" << acceptable;
}

void TestParameterControl::validatorStates()
{
    QFETCH(QString, kind);
    QFETCH(QString, text);
    QFETCH(int, state);

    ParameterControl control(specFor(kind));
    QString input = text;
    int position = int(input.size());
    QCOMPARE(int(control.spinBox()->validate(input, position)), state);
}

void TestParameterControl::logMappingEveryPosition()
{
    ParameterControl control(specFor("params"));
    QSlider* slider = control.slider();
    QCOMPARE(slider->minimum(), 0);
    QCOMPARE(slider->maximum(), 1000);

    double previous = -1;
    for (int position = 0; position <= slider->maximum(); ++position) {
        slider->setValue(position); // as a drag or key press would
        const double value = control.value();
        EXACT_COMPARE(value, paramsAtPosition(position));
        QVERIFY(value >= 1e6 && value <= 1e13);
        QVERIFY2(value > previous, qPrintable(QStringLiteral("position %1").arg(position)));
        QCOMPARE(value, std::floor(value)); // whole parameter counts
        previous = value;

        // Set from elsewhere, the value brings the slider back to the same position.
        control.setValue(position == 0 ? 1e13 : 1e6);
        control.setValue(value);
        QCOMPARE(slider->value(), position);
        QCOMPARE(control.positionForValue(value), position);
    }
}

void TestParameterControl::narrowLogRanges_data()
{
    QTest::addColumn<double>("minimum");
    QTest::addColumn<double>("maximum");
    QTest::addColumn<int>("decimals");
    QTest::addColumn<bool>("distinct");

    // One decade in 1,000 steps needs 4 significant digits to keep positions apart.
    QTest::newRow("1..10, 4 decimals") << 1.0 << 10.0 << 4 << true;
    // Whole numbers from 1 cannot be distinct at 1,000 positions: several stand for 1, 2, ...
    QTest::newRow("1..1000 whole") << 1.0 << 1000.0 << 0 << false;
}

void TestParameterControl::narrowLogRanges()
{
    QFETCH(double, minimum);
    QFETCH(double, maximum);
    QFETCH(int, decimals);
    QFETCH(bool, distinct);

    ParameterSpec spec = specFor("params");
    spec.minimum = minimum;
    spec.maximum = maximum;
    spec.decimals = decimals;
    ParameterControl control(spec);
    QSlider* slider = control.slider();
    const double grain = std::pow(10.0, -decimals);

    double previous = -1;
    for (int position = 0; position <= slider->maximum(); ++position) {
        slider->setValue(position);
        const double value = control.value();
        QVERIFY(value >= minimum && value <= maximum);
        QVERIFY(distinct ? value > previous : value >= previous);
        // A multiple of the decimals' grain (the tolerance only absorbs binary fractions).
        QVERIFY(std::abs(value / grain - std::round(value / grain)) < 1e-6);
        previous = value;

        control.setValue(position == 0 ? maximum : minimum);
        control.setValue(value);
        // The slider stands for the value; with distinct positions it is the same position.
        EXACT_COMPARE(control.valueAtPosition(slider->value()), value);
        if (distinct)
            QCOMPARE(slider->value(), position);
    }
    EXACT_COMPARE(control.valueAtPosition(0), minimum);
    EXACT_COMPARE(control.valueAtPosition(slider->maximum()), maximum);
}

void TestParameterControl::sliderKeepsItsPlaceAmongEqualValues()
{
    // Whole numbers 1..1000 on a log slider: about 70 positions all stand for 2.
    ParameterSpec spec = specFor("params");
    spec.minimum = 1;
    spec.maximum = 1000;
    ParameterControl control(spec);
    const int chosen = 120;
    const double value = std::round(std::pow(10.0, 3.0 * chosen / 1000.0)); // 10^0.36 = 2.29
    QCOMPARE(value, 2.0);
    QVERIFY(control.positionForValue(value) != chosen);

    control.slider()->setValue(chosen);
    EXACT_COMPARE(control.value(), value);
    QSignalSpy spy(&control, &ParameterControl::valueChanged);
    control.setValue(value);
    control.setRange(1, 1000); // as a tab does when re-applying a range
    control.spinBox()->setValue(value);
    QCOMPARE(control.slider()->value(), chosen);
    QCOMPARE(spy.count(), 0);
}

void TestParameterControl::linearMapping_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("positions");
    QTest::addColumn<bool>("exactSteps");

    QTest::newRow("layers") << "layers" << 127 << true;
    QTest::newRow("halves") << "half" << 20 << true;
    QTest::newRow("quarters") << "fraction" << 400 << true;
    QTest::newRow("tenths to 0.3") << "thirds" << 3 << true;
    QTest::newRow("10,000 steps") << "tenk" << 10000 << true;
    QTest::newRow("10,001 steps") << "tenk1" << 1000 << false;
    QTest::newRow("1e6 steps") << "wide" << 1000 << false;
    QTest::newRow("999,999 steps") << "tokens" << 1000 << false;
}

void TestParameterControl::linearMapping()
{
    QFETCH(QString, kind);
    QFETCH(int, positions);
    QFETCH(bool, exactSteps);

    const ParameterSpec spec = specFor(kind);
    ParameterControl control(spec);
    QCOMPARE(control.slider()->maximum(), positions);

    double previous = -std::numeric_limits<double>::infinity();
    for (int position = 0; position <= positions; ++position) {
        double expected = 0;
        if (position == positions)
            expected = spec.maximum;
        else if (exactSteps)
            expected = spec.minimum + position * spec.step;
        else // 1,000 equal parts of the range, rounded to the step
            expected = spec.minimum
                + std::round(position * ((spec.maximum - spec.minimum) / 1000.0) / spec.step)
                    * spec.step;
        control.slider()->setValue(position);
        EXACT_COMPARE(control.value(), expected);
        QVERIFY(control.value() > previous);
        previous = control.value();
    }
}

void TestParameterControl::spinBoxArrows()
{
    // Every value the log slider can take, independently of the control.
    std::vector<double> ladder;
    for (int position = 0; position <= 1000; ++position)
        ladder.push_back(paramsAtPosition(position));
    const double typed = 8030261248.0; // not on the ladder
    std::size_t above = 0;
    while (ladder[above] <= typed)
        ++above;
    const std::size_t below = above - 1;
    QVERIFY(ladder[below] < typed);

    Shown shown(specFor("params"));
    ParameterControl* control = shown.control;
    ParameterSpinBox* spin = control->spinBox();
    QSignalSpy spy(control, &ParameterControl::valueChanged);
    const struct {
        Qt::Key key;
        double expected;
    } cases[] = {{Qt::Key_Up, ladder[above]},
                 {Qt::Key_Down, ladder[below]},
                 {Qt::Key_PageUp, ladder[above + 9]},
                 {Qt::Key_PageDown, ladder[below - 9]}};
    for (const auto& step : cases) {
        control->setValue(typed);
        spy.clear();
        spin->setFocus();
        QTest::keyClick(spin, step.key);
        EXACT_COMPARE(control->value(), step.expected);
        QCOMPARE(spy.count(), 1);
    }

    // On a linear scale the arrows add the step.
    Shown layers(specFor("layers"));
    layers.control->setValue(10);
    QTest::keyClick(layers.control->spinBox(), Qt::Key_Up);
    EXACT_COMPARE(layers.control->value(), 11.0);
    QTest::keyClick(layers.control->spinBox(), Qt::Key_PageDown);
    EXACT_COMPARE(layers.control->value(), 1.0);
}

void TestParameterControl::setRangeClampsAndEmitsOnce()
{
    ParameterSpec spec = specFor("layers");
    spec.key = QStringLiteral("pipeline.segments");
    ParameterControl control(spec);
    control.setValue(100);
    QSignalSpy spy(&control, &ParameterControl::valueChanged);

    control.setRange(1, 32); // e.g. segments may not exceed the layers
    QCOMPARE(spy.count(), 1);
    EXACT_COMPARE(spy.at(0).at(0).toDouble(), 32.0);
    EXACT_COMPARE(control.value(), 32.0);
    EXACT_COMPARE(control.spinBox()->highest(), 32.0);
    EXACT_COMPARE(control.spinBox()->value(), 32.0);
    QCOMPARE(control.slider()->maximum(), 31);
    QCOMPARE(control.slider()->value(), 31);
    EXACT_COMPARE(control.spec().maximum, 32.0);

    control.setRange(1, 64); // the value still fits: nothing to say
    QCOMPARE(spy.count(), 1);
    EXACT_COMPARE(control.value(), 32.0);
    QCOMPARE(control.slider()->value(), 31);

    control.setRange(40, 64); // raised minimum
    QCOMPARE(spy.count(), 2);
    EXACT_COMPARE(control.value(), 40.0);
    QCOMPARE(control.slider()->value(), 0);

    control.setRange(64, 10); // maximum below minimum reads as the single value 64
    QCOMPARE(spy.count(), 3);
    EXACT_COMPARE(control.value(), 64.0);
    QCOMPARE(control.slider()->maximum(), 0);
}

namespace {
// Counts the layout requests a widget receives.
struct LayoutRequests : QObject {
    int count = 0;
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::LayoutRequest)
            ++count;
        return QObject::eventFilter(watched, event);
    }
};

// Delivers the layout requests posted so far and those their layouts post in turn, one level of
// widgets per pass (a pass delivers only what was posted before it began).
void settleLayouts()
{
    for (int pass = 0; pass < 4; ++pass)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
}
} // namespace

void TestParameterControl::aRangeThatSizesTheFieldAlikeLaysNothingOut()
{
    // The experts tab moves the experts' range with the ranks at every step. Ranges whose ends
    // are written with the same glyphs ("64" and "46", "4,096" and "4,069") size the field
    // alike, so after the first of them nothing may ask for a new layout.
    Shown shown(specFor("layers"));
    ParameterControl* control = shown.control;
    ParameterSpinBox* spin = control->spinBox();
    // The first range is the spin box's own (what accessibility tools report).
    EXACT_COMPARE(spin->minimum(), 1.0);
    EXACT_COMPARE(spin->maximum(), 128.0);
    control->setRange(64, 4096);
    control->setValue(64);
    control->setRange(46, 4069);
    control->setRange(64, 4096);
    settleLayouts();
    const int width = spin->sizeHint().width();

    LayoutRequests requests;
    control->installEventFilter(&requests);
    shown.window.installEventFilter(&requests);
    for (int i = 0; i < 4; ++i) {
        control->setRange(46, 4069);
        control->setRange(64, 4096);
    }
    settleLayouts();
    QCOMPARE(requests.count, 0);
    QCOMPARE(spin->sizeHint().width(), width);

    // The range is the control's, whatever the base class still holds: 46 is refused, the
    // arrows stop at 64.
    EXACT_COMPARE(spin->lowest(), 64.0);
    EXACT_COMPARE(spin->highest(), 4096.0);
    QSignalSpy refused(control, &ParameterControl::inputRefused);
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, QStringLiteral("46"));
    QTest::keyClick(spin, Qt::Key_Enter);
    QCOMPARE(refused.count(), 1);
    QVERIFY2(refused.first().first().toString().contains(u"64 to 4,096"),
             qPrintable(refused.first().first().toString()));
    EXACT_COMPARE(control->value(), 64.0);
    QTest::keyClick(spin, Qt::Key_Down);
    QTest::keyClick(spin, Qt::Key_PageDown);
    EXACT_COMPARE(control->value(), 64.0);
    control->setValue(4090);
    QTest::keyClick(spin, Qt::Key_PageUp);
    EXACT_COMPARE(control->value(), 4096.0);

    // A range that measures differently does resize the field.
    control->setRange(1, 9);
    settleLayouts();
    QVERIFY(requests.count > 0);
    EXACT_COMPARE(spin->minimum(), 1.0);
    EXACT_COMPARE(spin->maximum(), 9.0);
    QVERIFY(spin->sizeHint().width() < width);
}

void TestParameterControl::setValueEmitsOnlyOnChange()
{
    ParameterControl control(specFor("layers"));
    QSignalSpy spy(&control, &ParameterControl::valueChanged);
    QSignalSpy sliderSpy(control.slider(), &QSlider::valueChanged);
    QSignalSpy spinSpy(control.spinBox(), &QDoubleSpinBox::valueChanged);

    control.setValue(50);
    QCOMPARE(spy.count(), 1);
    control.setValue(50);
    QCOMPARE(spy.count(), 1);
    control.setValue(1e9); // clamped to 128
    QCOMPARE(spy.count(), 2);
    EXACT_COMPARE(control.value(), 128.0);
    control.setValue(1e9); // still 128
    QCOMPARE(spy.count(), 2);
    control.setValue(std::numeric_limits<double>::quiet_NaN());
    QCOMPARE(spy.count(), 2);
    EXACT_COMPARE(control.value(), 128.0);
    control.setValue(7.4); // whole numbers: rounds to 7
    QCOMPARE(spy.count(), 3);
    EXACT_COMPARE(control.value(), 7.0);
    QCOMPARE(control.wholeValue(), Q_INT64_C(7));

    // The parts were kept in step with their signals blocked.
    QCOMPARE(sliderSpy.count(), 0);
    QCOMPARE(spinSpy.count(), 0);
    QCOMPARE(control.slider()->value(), 6);
    EXACT_COMPARE(control.spinBox()->value(), 7.0);
}

void TestParameterControl::oneSignalPerUserChange()
{
    ParameterControl control(specFor("layers"));
    QSignalSpy spy(&control, &ParameterControl::valueChanged);
    QSignalSpy spinSpy(control.spinBox(), &QDoubleSpinBox::valueChanged);

    control.slider()->setValue(9); // the slider moved by the user
    QCOMPARE(spy.count(), 1);
    EXACT_COMPARE(control.value(), 10.0);
    EXACT_COMPARE(control.spinBox()->value(), 10.0);
    QCOMPARE(spinSpy.count(), 0);

    QSignalSpy sliderSpy(control.slider(), &QSlider::valueChanged);
    control.spinBox()->setValue(20); // the spin box changed by the user
    QCOMPARE(spy.count(), 2);
    EXACT_COMPARE(control.value(), 20.0);
    QCOMPARE(control.slider()->value(), 19);
    QCOMPARE(sliderSpy.count(), 0);
}

void TestParameterControl::wholeNumbersUpTo2Pow53()
{
    Shown shown(specFor("exact"));
    ParameterControl* control = shown.control;
    control->setValue(kTwoPow53 - 1);
    QCOMPARE(control->wholeValue(), Q_INT64_C(9007199254740991));
    QCOMPARE(control->spinBox()->text(), QStringLiteral("9,007,199,254,740,991"));
    control->setValue(kTwoPow53);
    QCOMPARE(control->wholeValue(), Q_INT64_C(9007199254740992));

    control->setValue(0);
    control->spinBox()->setFocus();
    control->spinBox()->selectAll();
    QTest::keyClicks(control->spinBox(), QStringLiteral("9007199254740991"));
    QTest::keyClick(control->spinBox(), Qt::Key_Enter);
    QCOMPARE(control->wholeValue(), Q_INT64_C(9007199254740991));
    QTest::keyClick(control->spinBox(), Qt::Key_Up);
    QCOMPARE(control->wholeValue(), Q_INT64_C(9007199254740992));

    // A range past 2^53 is cut there: beyond it whole numbers are not all representable.
    ParameterSpec huge = specFor("exact");
    huge.maximum = 1e20;
    ParameterControl capped(huge);
    EXACT_COMPARE(capped.spec().maximum, kTwoPow53);
}

void TestParameterControl::formatting_data()
{
    QTest::addColumn<double>("value");
    QTest::addColumn<int>("decimals");
    QTest::addColumn<bool>("suffixes");
    QTest::addColumn<QString>("text");

    QTest::newRow("7B") << 7e9 << 0 << true << "7B";
    QTest::newRow("7.5B") << 7.5e9 << 0 << true << "7.5B";
    QTest::newRow("175B") << 175e9 << 0 << true << "175B";
    QTest::newRow("8.03B") << 8.03e9 << 0 << true << "8.03B";
    QTest::newRow("not exact in 4 digits") << 8030261248.0 << 0 << true << "8,030,261,248";
    QTest::newRow("1.5T") << 1.5e12 << 0 << true << "1.5T";
    QTest::newRow("1.5K") << 1500.0 << 0 << true << "1.5K";
    QTest::newRow("4096 is shorter grouped") << 4096.0 << 0 << true << "4,096";
    QTest::newRow("below a thousand") << 999.0 << 0 << true << "999";
    QTest::newRow("1.234M") << 1234000.0 << 0 << true << "1.234M";
    QTest::newRow("five digits") << 1234500.0 << 0 << true << "1,234,500";
    QTest::newRow("negative") << -2e6 << 0 << true << "-2M";
    QTest::newRow("zero") << 0.0 << 0 << true << "0";
    QTest::newRow("without suffixes") << 7e9 << 0 << false << "7,000,000,000";
    QTest::newRow("decimals") << 1234.5 << 1 << false << "1,234.5";
    QTest::newRow("padded decimals") << 0.5 << 2 << false << "0.50";
    QTest::newRow("not whole with suffixes") << 1500.5 << 1 << true << "1,500.5";
}

void TestParameterControl::formatting()
{
    QFETCH(double, value);
    QFETCH(int, decimals);
    QFETCH(bool, suffixes);
    QFETCH(QString, text);
    QCOMPARE(formatQuantity(value, decimals, suffixes), text);
}

void TestParameterControl::parsing_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("suffixes");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<double>("value");

    QTest::newRow("7B") << "7B" << true << true << 7e9;
    QTest::newRow("1.5t") << "1.5t" << true << true << 1.5e12;
    QTest::newRow("8.03B exact") << "8.03B" << true << true << 8030000000.0;
    QTest::newRow("8k") << "8k" << true << true << 8000.0;
    QTest::newRow("7g") << "7g" << true << true << 7e9;
    QTest::newRow("grouped") << "7,000,000,000" << false << true << 7e9;
    QTest::newRow("exponent") << "7e9" << false << true << 7e9;
    QTest::newRow("trailing point") << "7." << false << true << 7.0;
    QTest::newRow("suffix refused") << "7B" << false << false << 0.0;
    QTest::newRow("half typed") << "7e" << false << false << 0.0;
    QTest::newRow("empty") << "" << true << false << 0.0;
    QTest::newRow("2^53 - 1") << "9007199254740991" << false << true << kTwoPow53 - 1;
}

void TestParameterControl::parsing()
{
    QFETCH(QString, text);
    QFETCH(bool, suffixes);
    QFETCH(bool, valid);
    QFETCH(double, value);
    const std::optional<double> parsed = parseQuantity(text, suffixes);
    QCOMPARE(parsed.has_value(), valid);
    if (valid)
        EXACT_COMPARE(*parsed, value);
}

void TestParameterControl::readingAgreesWithThePattern()
{
    // Every text of up to four characters from the ones that matter (digits, separators, signs,
    // exponent and multiplier letters, blanks, a letter that is none of those, a digit and a
    // space that are not ASCII), then longer texts drawn at random from the number-making ones.
    const QString alphabet = QStringLiteral("0159,.eE+-kB tx\u0663\u00a0");
    QString why;
    int read = 0;
    std::vector<qsizetype> at;
    for (qsizetype length = 0; length <= 4; ++length) {
        at.assign(std::size_t(length), 0);
        while (true) {
            QString text;
            for (qsizetype i : at)
                text += alphabet[i];
            ++read;
            QVERIFY2(readsAsThePattern(text, &why), qPrintable(why));
            qsizetype i = length - 1;
            while (i >= 0 && ++at[std::size_t(i)] == alphabet.size())
                at[std::size_t(i--)] = 0;
            if (i < 0)
                break;
        }
    }
    const QString numbery = QStringLiteral("0123456789,,,...eE+- kMBT");
    std::mt19937 random(20261206);
    std::uniform_int_distribution<qsizetype> length(5, 16);
    std::uniform_int_distribution<qsizetype> pick(0, numbery.size() - 1);
    for (int n = 0; n < 50000; ++n) {
        QString text;
        for (qsizetype i = length(random); i > 0; --i)
            text += numbery[pick(random)];
        ++read;
        QVERIFY2(readsAsThePattern(text, &why), qPrintable(why));
    }
    // Grouped numbers, with and without fractions and multipliers, are among them.
    for (const char* text : {"1,234,567.5e-3", "12,345 B", "999,999,999,999", "1,234.", ".5k"})
        QVERIFY2(readsAsThePattern(QString::fromLatin1(text), &why), qPrintable(why));
    QCOMPARE(read, 1 + 17 + 17 * 17 + 17 * 17 * 17 + 17 * 17 * 17 * 17 + 50000);
}

void TestParameterControl::accessibility()
{
    ParameterControl control(specFor("params"));
    QCOMPARE(control.objectName(), QStringLiteral("memory.parameters"));
    QCOMPARE(control.slider()->objectName(), QStringLiteral("memory.parameters.slider"));
    QCOMPARE(control.spinBox()->objectName(), QStringLiteral("memory.parameters.spin"));
    QCOMPARE(control.slider()->orientation(), Qt::Horizontal);

    QCOMPARE(control.slider()->accessibleName(), QStringLiteral("Parameters"));
    QCOMPARE(control.spinBox()->accessibleName(), QStringLiteral("Parameters value"));
    QCOMPARE(control.slider()->accessibleDescription(), kParametersDescription);
    QCOMPARE(control.spinBox()->accessibleDescription(), kParametersDescription);

    const QString tip = QStringLiteral("Parameters (P), in parameters: ") + kParametersDescription;
    QCOMPARE(control.toolTip(), tip);
    QCOMPARE(control.slider()->toolTip(), tip);
    QCOMPARE(control.spinBox()->toolTip(), tip);

    QCOMPARE(control.label()->text(), QStringLiteral("&Parameters"));
    QCOMPARE(control.label()->buddy(), control.spinBox());
    QCOMPARE(control.unitLabel()->text(), QStringLiteral("parameters"));
    QCOMPARE(control.slider()->singleStep(), 1);
    QCOMPARE(control.slider()->pageStep(), 10);
}

void TestParameterControl::mnemonicFocusesSpinBox()
{
    Shown shown(specFor("params"));
    QVERIFY(QTest::qWaitForWindowActive(&shown.window));
    shown.control->slider()->setFocus();
    QTest::keyClick(&shown.window, Qt::Key_P, Qt::AltModifier);
    QWidget* focused = QApplication::focusWidget();
    QVERIFY(focused == shown.control->spinBox() || shown.control->spinBox()->isAncestorOf(focused));
}

void TestParameterControl::followsApplicationFont()
{
    const QFont original = QApplication::font();
    ParameterControl control(specFor("params"));
    for (QWidget* part :
         {static_cast<QWidget*>(control.label()), static_cast<QWidget*>(control.slider()),
          static_cast<QWidget*>(control.spinBox()), static_cast<QWidget*>(control.unitLabel())})
        QVERIFY(!part->testAttribute(Qt::WA_SetFont)); // no font of its own
    // A value typed in full must fit, even though the maximum shows as "10T".
    const QFontMetrics metrics = control.spinBox()->fontMetrics();
    QVERIFY(control.spinBox()->sizeHint().width()
            > metrics.horizontalAdvance(QStringLiteral("10,000,000,000,000")));
    const int labelWidth = control.label()->sizeHint().width();
    const int spinBoxWidth = control.spinBox()->sizeHint().width();

    QFont large = original;
    large.setPointSizeF(original.pointSizeF() * 2);
    QApplication::setFont(large);
    QCoreApplication::processEvents(); // the change reaches widgets as posted events
    const bool followed = control.label()->font().pointSizeF() == large.pointSizeF()
        && control.spinBox()->font().pointSizeF() == large.pointSizeF()
        && control.unitLabel()->font().pointSizeF() == large.pointSizeF()
        && control.label()->sizeHint().width() > labelWidth
        && control.spinBox()->sizeHint().width() > spinBoxWidth;
    QApplication::setFont(original);
    QCoreApplication::processEvents();
    QVERIFY(followed);
}

void TestParameterControl::alignColumns()
{
    ParameterControl parameters(specFor("params"));
    ParameterControl layers(specFor("layers"));
    ParameterControl::alignColumns({&parameters, &layers});
    QCOMPARE(parameters.label()->minimumWidth(), layers.label()->minimumWidth());
    QCOMPARE(parameters.spinBox()->minimumWidth(), layers.spinBox()->minimumWidth());
    QCOMPARE(parameters.unitLabel()->minimumWidth(), layers.unitLabel()->minimumWidth());
    QVERIFY(layers.label()->minimumWidth() >= parameters.label()->sizeHint().width());
    QVERIFY(layers.spinBox()->minimumWidth() >= parameters.spinBox()->sizeHint().width());
}

QTEST_MAIN(TestParameterControl)
#include "tst_parametercontrol.moc"
