// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/configwatcher.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QFileSystemWatcher>

namespace slp {

namespace {
QByteArray digestOf(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return QByteArrayLiteral("(unreadable)");
    return QCryptographicHash::hash(file.readAll(), QCryptographicHash::Sha256);
}
} // namespace

ConfigWatcher::ConfigWatcher(const QString &path, QObject *parent)
    : QObject(parent), m_path(QFileInfo(path).absoluteFilePath()),
      m_watcher(new QFileSystemWatcher(this)), m_digest(digestOf(m_path))
{
    m_watcher->addPath(m_path);
    m_watcher->addPath(QFileInfo(m_path).absolutePath());
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(kDebounceMs);
    connect(m_watcher, &QFileSystemWatcher::fileChanged, this, &ConfigWatcher::onTouched);
    connect(m_watcher, &QFileSystemWatcher::directoryChanged, this, &ConfigWatcher::onTouched);
    connect(&m_debounce, &QTimer::timeout, this, &ConfigWatcher::onSettled);
}

void ConfigWatcher::onTouched()
{
    m_debounce.start(); // each new event restarts the wait: one reload for a burst of writes
}

void ConfigWatcher::onSettled()
{
    // A rename over the file drops the watch on the old inode: watch the new one.
    if (!m_watcher->files().contains(m_path) && QFileInfo::exists(m_path))
        m_watcher->addPath(m_path);
    // Other files in the directory, or a write of the same bytes, change nothing.
    const QByteArray digest = digestOf(m_path);
    if (digest == m_digest)
        return;
    m_digest = digest;
    Q_EMIT changed();
}

} // namespace slp
