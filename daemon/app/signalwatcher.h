// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QObject>

class QSocketNotifier;

namespace slp {

// Turns SIGTERM, SIGINT and SIGHUP into Qt signals on the event loop (self-pipe), since
// nothing but a write() is safe inside a Unix signal handler.
class SignalWatcher : public QObject
{
    Q_OBJECT
public:
    explicit SignalWatcher(QObject *parent = nullptr);
    ~SignalWatcher() override;

Q_SIGNALS:
    void terminateRequested(int signal);
    void reloadRequested();

private:
    void onReadable();
    QSocketNotifier *m_notifier = nullptr; // Qt child
};

} // namespace slp
