// slp-monitor placeholder: the tray app arrives with its own issue. It already refuses stray
// words and unknown flags, as slp does, so no script comes to depend on lenient parsing.
#include <QCoreApplication>
#include <QStringList>

#include <cstdio>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments().mid(1);
    for (const QString &arg : args) {
        if (arg == QLatin1String("--version")) {
            std::printf("slp-monitor %s\n", SLP_VERSION);
            return 0;
        }
        if (arg == QLatin1String("--help") || arg == QLatin1String("-h")) {
            std::printf("usage: slp-monitor [--url URL] [--interval DURATION] [--once]\n"
                        "(the tray monitor is not built yet; this is a placeholder)\n");
            return 0;
        }
    }
    std::fprintf(stderr, "slp-monitor: not implemented yet%s\n",
                 args.isEmpty() ? "" : " (arguments ignored)");
    return args.isEmpty() ? 1 : 2;
}
