// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/workerpool.h"

#include "config/config.h"
#include "net/epolldispatcher.h"
#include "net/sharedport.h"
#include "observe/logging.h"
#include "routing/routetable.h"

#include <QThread>

namespace slp {

WorkerPool::WorkerPool(const WorkerShared &shared, QObject *parent)
    : QObject(parent), m_shared(shared)
{}

WorkerPool::~WorkerPool()
{
    stop();
}

bool WorkerPool::start(const Config &config, const WorkerSettings &settings,
                       std::shared_ptr<const RouteTable> table, QString *error)
{
    if (!m_sockets.acquire(config, kListenBacklog, error))
        return false;
    const QStringList given = m_sockets.addresses();
    const bool sharePort = config.workers > 1 && m_sockets.descriptors().isEmpty();
    QString failure;
    if (sharePort && !portIsFree(config.listen.host, config.listen.port, &failure)) {
        *error = QStringLiteral("cannot listen on %1: %2").arg(config.listen.text, failure);
        return false;
    }
    if (!startWorkers(config, settings, table, sharePort, &failure)) {
        const QString where = given.isEmpty() ? config.listen.text : given.join(", ");
        *error = QStringLiteral("cannot listen on %1: %2").arg(where, failure);
        return false;
    }
    m_sockets.closeDescriptors(); // every worker holds duplicates
    logListening(config, sharePort, m_sockets.passedBySystemd() ? given : QStringList());
    return true;
}

bool WorkerPool::startWorkers(const Config &config, const WorkerSettings &settings,
                              const std::shared_ptr<const RouteTable> &table, bool sharePort,
                              QString *error)
{
    ListenAddress address = config.listen;
    const QList<int> sockets = m_sockets.descriptors();
    for (int i = 0; i < config.workers; ++i) {
        auto *worker = new ServingWorker(i, settings, table, m_shared);
        m_workers.append(worker); // owned: deleted in stop()
        bool listening = false;
        if (i == 0) {
            listening = worker->start(address, sharePort, sockets, error);
            address.port = worker->serverPort(); // the rest join the port the OS picked
        } else {
            auto *thread = new QThread; // owned: deleted in stop()
            thread->setObjectName(QStringLiteral("slp-worker-%1").arg(i)); // the OS thread name
            if (QAbstractEventDispatcher *dispatcher = createEventDispatcher())
                thread->setEventDispatcher(dispatcher); // owned by the thread from here
            m_threads.append(thread);
            worker->moveToThread(thread);
            connect(thread, &QThread::finished, worker, &QObject::deleteLater);
            thread->start();
            QMetaObject::invokeMethod(
                worker, [&] { listening = worker->start(address, sharePort, sockets, error); },
                Qt::BlockingQueuedConnection);
        }
        if (!listening)
            return false;
    }
    return true;
}

void WorkerPool::stop()
{
    for (QThread *thread : std::as_const(m_threads))
        thread->quit(); // its worker is deleted on that thread as it finishes
    for (QThread *thread : std::exchange(m_threads, {})) {
        thread->wait();
        delete thread;
    }
    if (!m_workers.isEmpty())
        delete m_workers.first();
    m_workers.clear();
}

void WorkerPool::onEveryWorker(const std::function<void(ServingWorker *)> &call)
{
    // Blocking: once this returns every worker has applied the call, so a log line written
    // after it ("reload: ...") is true on every thread. Workers never wait on this thread.
    for (ServingWorker *worker : std::as_const(m_workers)) {
        if (worker->thread() == thread()) {
            call(worker);
        } else {
            QMetaObject::invokeMethod(
                worker, [&call, worker] { call(worker); }, Qt::BlockingQueuedConnection);
        }
    }
}

void WorkerPool::publish(std::shared_ptr<const RouteTable> table)
{
    onEveryWorker([&table](ServingWorker *worker) { worker->setTable(table); });
}

void WorkerPool::applySettings(const WorkerSettings &settings)
{
    onEveryWorker([&settings](ServingWorker *worker) { worker->applySettings(settings); });
}

void WorkerPool::stopAccepting()
{
    onEveryWorker([](ServingWorker *worker) { worker->stopAccepting(); });
}

int WorkerPool::closeConnections()
{
    int unread = 0;
    onEveryWorker([&unread](ServingWorker *worker) { unread += worker->closeConnections(); });
    return unread;
}

void WorkerPool::logListening(const Config &config, bool sharePort, const QStringList &passed) const
{
    const int workers = config.workers;
    if (sharePort) {
        qCInfo(lcServer).noquote()
            << QStringLiteral("%1 worker threads share the port (SO_REUSEPORT)").arg(workers);
    } else if (workers > 1) {
        qCInfo(lcServer).noquote()
            << QStringLiteral("%1 worker threads accept on the same socket").arg(workers);
    }
    if (!passed.isEmpty()) {
        qCInfo(lcServer).noquote()
            << QStringLiteral("socket activation: systemd passed %1 listening socket(s); "
                              "listen: %2 is ignored")
                   .arg(passed.size())
                   .arg(config.listen.text);
        for (const QString &address : passed) {
            qCInfo(lcServer).noquote()
                << QStringLiteral("listening on %1 (passed by systemd)").arg(address);
        }
        return;
    }
    if (config.listen.isUnix()) {
        qCInfo(lcServer).noquote() << QStringLiteral("listening on %1 (mode %2)")
                                          .arg(config.listen.text)
                                          .arg(config.listenMode, 4, 8, QLatin1Char('0'));
        return;
    }
    const QHostAddress bound = m_workers.first()->serverAddress();
    QString host = bound.toString();
    if (bound.protocol() == QAbstractSocket::IPv6Protocol)
        host = QLatin1Char('[') + host + QLatin1Char(']');
    qCInfo(lcServer).noquote()
        << QStringLiteral("listening on %1:%2").arg(host).arg(m_workers.first()->serverPort());
}

} // namespace slp
