// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QObject>
#include <QStringList>

class QProcess;

namespace slp {

// `slp --check --config PATH` in a child process, killed at the deadline.
class ConfigCheck : public QObject
{
    Q_OBJECT
public:
    explicit ConfigCheck(const QString &path, QObject *parent = nullptr);
    void start();

Q_SIGNALS:
    // ok: the file compiles; else `errors` are the check's error lines (empty when it was
    // killed at the deadline: `timedOut`).
    void finished(bool ok, const QStringList &errors, bool timedOut);

private:
    QProcess *m_process; // Qt child
    bool m_timedOut = false;
};

} // namespace slp
