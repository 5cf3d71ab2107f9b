// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/configcheck.h"

#include "app/yamldeadline.h"

#include <QCoreApplication>
#include <QProcess>
#include <QTimer>

namespace slp {

ConfigCheck::ConfigCheck(const QString &path, QObject *parent)
    : QObject(parent), m_process(new QProcess(this))
{
    m_process->setProgram(QCoreApplication::applicationFilePath());
    m_process->setArguments({QStringLiteral("--check"), QStringLiteral("--config"), path});
    m_process->setProcessChannelMode(QProcess::SeparateChannels);
    auto *deadline = new QTimer(this); // Qt child
    deadline->setSingleShot(true);
    deadline->setInterval(kYamlDeadline);
    connect(m_process, &QProcess::started, deadline, qOverload<>(&QTimer::start));
    connect(
        deadline, &QTimer::timeout, this,
        [this] {
            m_timedOut = true;
            m_process->kill();
        });
    connect(m_process, &QProcess::finished, this,
            [this](int exitCode, QProcess::ExitStatus status) {
                if (status == QProcess::NormalExit && exitCode == 0) {
                    Q_EMIT finished(true, {}, false);
                    return;
                }
                // The check printed every error, then "slp: N config error(s); nothing was
                // started".
                QStringList lines = QString::fromUtf8(m_process->readAllStandardError())
                                        .split(QLatin1Char('\n'), Qt::SkipEmptyParts);
                lines.removeIf([](const QString &line) {
                    return line.startsWith(QLatin1String("slp: ")) &&
                           line.endsWith(QLatin1String("nothing was started"));
                });
                Q_EMIT finished(false, m_timedOut ? QStringList() : lines, m_timedOut);
            });
}

void ConfigCheck::start()
{
    m_process->start();
}

} // namespace slp
