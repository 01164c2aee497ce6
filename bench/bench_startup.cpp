// Cold start: how long ScaleLab takes from launch to its first painted window, against a bare
// Qt Charts window with one chart (startup_yardstick) on the same machine. Each program is
// started --runs times (20 unless told), the two in turn, and each run is timed from the launch
// until the program prints "painted" (ScaleLab does with SCALELAB_REPORT_FIRST_PAINT set); the
// program is then stopped. Prints the median, fastest and slowest of each and the ratio of the
// medians. A benchmark, not a test: run it on a quiet machine.
//
//   cmake --build --preset release --target bench_startup
//   ./build/release/bench/bench_startup [--runs N]
//
// ScaleLab starts as a new user's would: with an empty settings folder, so no saved session.

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

namespace {

constexpr int kTimeoutMs = 60000; ///< a start slower than this is a failure, not a figure

/// Milliseconds from launching `program` to its "painted", or nothing when it never said so.
std::optional<double> timeOneStart(const QString& program, const QProcessEnvironment& environment)
{
    QProcess process;
    process.setProcessEnvironment(environment);
    process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    QElapsedTimer timer;
    timer.start();
    process.start(program, {});
    std::optional<double> ms;
    while (!ms && timer.elapsed() < kTimeoutMs && process.state() != QProcess::NotRunning) {
        if (!process.canReadLine() && !process.waitForReadyRead(kTimeoutMs))
            break;
        while (process.canReadLine())
            if (process.readLine().trimmed() == "painted")
                ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    }
    process.kill();
    process.waitForFinished();
    return ms;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    int runs = 20;
    const QStringList args = QCoreApplication::arguments();
    for (qsizetype i = 1; i + 1 < args.size(); ++i)
        if (args[i] == "--runs")
            runs = std::max(1, args[i + 1].toInt());
    QTemporaryDir settings; // no saved session: the defaults, as on a new user's first start
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    if (!environment.contains("QT_QPA_PLATFORM"))
        environment.insert("QT_QPA_PLATFORM", "offscreen");
    environment.insert("XDG_CONFIG_HOME", settings.path());
    environment.insert("SCALELAB_REPORT_FIRST_PAINT", "1");

    const struct {
        const char* name;
        QString program;
    } programs[] = {{"scalelab", QStringLiteral(SCALELAB_PROGRAM)},
                    {"yardstick", QStringLiteral(YARDSTICK_PROGRAM)}};
    std::vector<double> ms[2];
    for (int run = 0; run < runs; ++run)
        for (int k = 0; k < 2; ++k) {
            const int which = (run + k) % 2; // the two in turn, each first half the time
            const std::optional<double> t = timeOneStart(programs[which].program, environment);
            if (!t) {
                std::fprintf(stderr, "%s did not paint within %d s\n", programs[which].name,
                             kTimeoutMs / 1000);
                return 1;
            }
            ms[which].push_back(*t);
        }
    std::printf("%-10s %6s %10s %10s %10s\n", "program", "runs", "median ms", "fastest", "slowest");
    for (int which = 0; which < 2; ++which)
        std::printf("%-10s %6d %10.1f %10.1f %10.1f\n", programs[which].name, runs,
                    median(ms[which]), *std::min_element(ms[which].begin(), ms[which].end()),
                    *std::max_element(ms[which].begin(), ms[which].end()));
    std::printf("ScaleLab's median start is %.2f times the yardstick's\n",
                median(ms[0]) / median(ms[1]));
    return 0;
}
