// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QObject>
#include <QTimer>

class QFileSystemWatcher;

namespace slp {

// `watch_config: true` / `--watch-config`: emits changed() once the config file's content has
// changed and stayed still for a moment (debounced), so the daemon reloads as on SIGHUP. The
// file and its directory are both watched: an editor that saves by writing a new file and
// renaming it over the old one replaces the inode the file watch was on.
class ConfigWatcher : public QObject
{
    Q_OBJECT
public:
    static constexpr int kDebounceMs = 300;
    explicit ConfigWatcher(const QString &path, QObject *parent = nullptr);

Q_SIGNALS:
    void changed();

private:
    void onTouched();
    void onSettled();

    QString m_path;
    QFileSystemWatcher *m_watcher = nullptr; // Qt child
    QTimer m_debounce;
    QByteArray m_digest; // of the content last reported (or read at start)
};

} // namespace slp
