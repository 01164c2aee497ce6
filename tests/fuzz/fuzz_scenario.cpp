// A scenario file's bytes through everything that reads them: JSON, the section readers, the
// validators, and then either the report and a write -> read round trip that must change nothing,
// or the one-line error description. Anything else (a crash, a hang, an exception other than
// InputError, a round trip that changes the scenario, an accepted scenario past a documented
// limit) is a finding. The report is built at the fuzzer's sizes (fuzz_budget.h): the
// validators see the input as written, the computation a shrunk copy that takes the same paths.
#include "fuzz_budget.h"
#include "report.h"
#include "scalelab/core/error.h"
#include "scenariojson.h"

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

[[noreturn]] void finding(const char* what, const QByteArray& detail)
{
    std::fprintf(stderr, "fuzz_scenario: %s\n%s\n", what, detail.constData());
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace scalelab;
    const QByteArray text =
        QByteArray::fromRawData(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    QJsonParseError parse;
    const QJsonDocument document = QJsonDocument::fromJson(text, &parse);
    if (parse.error != QJsonParseError::NoError || !document.isObject())
        return 0; // refused by the JSON parser before ScaleLab sees it
    const QJsonObject object = document.object();
    core::Scenario scenario;
    try {
        scenario = document::scenarioFromJson(object);
    } catch (const core::InputError& e) {
        const QString line = document::describeInputError(QStringLiteral("f.json"), e, object);
        if (line.isEmpty() || line.contains('\n'))
            finding("the error is not one line", line.toUtf8());
        return 0;
    }
    // Written out and read back, nothing changes.
    const QJsonObject written = document::scenarioToJson(scenario);
    try {
        const QJsonObject again = document::scenarioToJson(document::scenarioFromJson(written));
        if (again != written)
            finding("the round trip changed the scenario",
                    QJsonDocument(written).toJson() + "\n->\n" + QJsonDocument(again).toJson());
    } catch (const core::InputError& e) {
        finding("a written scenario is refused when read back", e.what());
    }
    const std::string passed = fuzz::passedLimit(scenario);
    if (!passed.empty())
        finding("an accepted scenario passes a documented limit",
                QByteArray::fromStdString(passed));
    const core::Scenario shrunk = fuzz::shrunkForFuzzing(scenario);
    try {
        core::validate(shrunk);
    } catch (const core::InputError& e) {
        finding("the fuzzer's shrinking made a valid scenario invalid", e.what());
    }
    try {
        (void)app::buildReport(shrunk, fuzz::kFuzzReportBounds);
    } catch (const core::InputError&) {
        // A refusal the validator leaves to the computation: reported as bad input (exit 2).
    }
    return 0;
}
