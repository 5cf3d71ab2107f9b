// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "app/listensockets.h"
#include "app/servingworker.h"

#include <QList>
#include <QObject>

#include <functional>
#include <memory>

class QThread;

namespace slp {

class ConnectionBudget;
class MetricsRegistry;
class RouteTable;
struct Config;

// The serving workers: worker 0 on the daemon's thread, `workers: N` in all, the others on
// threads of their own, and the listening sockets they accept on (passed by systemd, a Unix
// socket, or bound here). Everything the daemon does to
// the workers goes through here and runs on each worker's own thread.
class WorkerPool : public QObject
{
    Q_OBJECT
public:
    // `shared` outlives the pool (the daemon owns both).
    explicit WorkerPool(const WorkerShared &shared, QObject *parent = nullptr);
    ~WorkerPool() override; // stops the workers

    // Acquires the listening sockets, starts config.workers workers with `settings` and
    // `table`, and logs where it listens; false with `error` set when the address is unusable
    // (the workers already started are stopped with the pool).
    bool start(const Config &config, const WorkerSettings &settings,
               std::shared_ptr<const RouteTable> table, QString *error);
    void stop();

    // Runs `call` on each worker's own thread, in turn, and returns once all have run it.
    void onEveryWorker(const std::function<void(ServingWorker *)> &call);
    void publish(std::shared_ptr<const RouteTable> table);
    void applySettings(const WorkerSettings &settings);
    void stopAccepting();
    // Closes idle connections on every worker; the number left because they have unread bytes.
    int closeConnections();
    int size() const { return int(m_workers.size()); }

private:
    bool startWorkers(const Config &config, const WorkerSettings &settings,
                      const std::shared_ptr<const RouteTable> &table, bool sharePort,
                      QString *error);
    void logListening(const Config &config, bool sharePort, const QStringList &passed) const;

    WorkerShared m_shared;
    ListenSockets m_sockets; // passed by systemd, or the Unix socket; outlives the workers
    // m_workers[0] runs on this thread; m_workers[i] on m_threads[i - 1], deleted there when
    // that thread finishes.
    QList<ServingWorker *> m_workers;
    QList<QThread *> m_threads;
};

} // namespace slp
