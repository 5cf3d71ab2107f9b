// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "app/configcheck.h"

#include <QObject>
#include <QPointer>
#include <QStringList>

namespace slp {

class ConfigWatcher;

// A reload's first step: the config file is compiled by `slp --check` in a child process
// (ConfigCheck, killed at the YAML deadline), so a file that hangs the parser costs a child,
// never the event loop that serves every request. One check at a time; a reload asked while
// one runs makes it run once more after (the file may have changed since the child read it).
// A check is asked for by SIGHUP or, with watch_config, by a change to the file.
class ReloadCheck : public QObject
{
    Q_OBJECT
public:
    explicit ReloadCheck(QString configPath, QObject *parent = nullptr);

    // Starts a check, or marks one to follow the running one.
    void request();
    bool isRunning() const { return m_check != nullptr; }
    const QString &configPath() const { return m_path; }
    // watch_config: a change to the file asks for a check (ConfigWatcher).
    void watch(bool on);

Q_SIGNALS:
    void started();
    // The file compiles: the daemon loads it in-process and swaps.
    void passed();
    // It does not: what to log (a summary, then the check's own lines).
    void failed(const QString &summary, const QStringList &details);
    // After passed() or failed() has been handled; a queued check starts right after.
    void done();

private:
    void onFinished(bool ok, const QStringList &errors, bool timedOut);

    QString m_path;
    QPointer<ConfigCheck> m_check; // Qt child while a check runs
    bool m_again = false;
    ConfigWatcher *m_watcher = nullptr; // Qt child, with watch_config
};

} // namespace slp
