// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/reloadcheck.h"

#include "app/configcheck.h"
#include "app/configwatcher.h"
#include "app/yamldeadline.h"
#include "observe/logging.h"

namespace slp {

ReloadCheck::ReloadCheck(QString configPath, QObject *parent)
    : QObject(parent), m_path(std::move(configPath))
{}

void ReloadCheck::request()
{
    if (m_check) {
        qCInfo(lcConfig) << "reload: a reload is already being checked; another follows it";
        m_again = true;
        return;
    }
    m_check = new ConfigCheck(m_path, this);
    connect(m_check, &ConfigCheck::finished, this, &ReloadCheck::onFinished);
    Q_EMIT started();
    m_check->start();
}

void ReloadCheck::watch(bool on)
{
    if (on == (m_watcher != nullptr))
        return;
    if (!on) {
        delete std::exchange(m_watcher, nullptr);
        qCInfo(lcConfig).noquote() << QStringLiteral("no longer watching %1").arg(m_path);
        return;
    }
    m_watcher = new ConfigWatcher(m_path, this);
    connect(m_watcher, &ConfigWatcher::changed, this, [this] {
        qCInfo(lcConfig).noquote() << QStringLiteral("%1 changed: reloading").arg(m_path);
        request();
    });
    qCInfo(lcConfig).noquote()
        << QStringLiteral("watching %1 for changes (watch_config)").arg(m_path);
}

void ReloadCheck::onFinished(bool ok, const QStringList &errors, bool timedOut)
{
    m_check->deleteLater();
    m_check = nullptr;
    if (ok)
        Q_EMIT passed();
    else if (timedOut)
        Q_EMIT failed(yamlDeadlineMessage(m_path), {});
    else
        Q_EMIT failed(QStringLiteral("%1 has %2 error(s)").arg(m_path).arg(errors.size()), errors);
    Q_EMIT done();
    if (std::exchange(m_again, false))
        request();
}

} // namespace slp
