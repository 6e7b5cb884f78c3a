// Precedence: environment over profile over default; secrets from the environment or the
// keychain; where each value came from; invalid environment values reported, not used.

#include "core/config/effectiveconfig.h"
#include "core/logging/logging.h"

#include <QTest>

using namespace Starforge;
using namespace Starforge::Config;

class TestEffectiveConfig : public QObject
{
    Q_OBJECT

    static Profile profile()
    {
        Profile p;
        p.name = QStringLiteral("lab");
        p.values.insert(QStringLiteral("FORGE_K8S_NAMESPACE"), QStringLiteral("research"));
        p.values.insert(QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("https://profile.example:6443"));
        p.values.insert(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS"), QStringLiteral("120"));
        return p;
    }

private Q_SLOTS:
    void defaultsWithoutProfile()
    {
        const auto config = EffectiveConfig::resolve(std::nullopt, QProcessEnvironment());
        QCOMPARE(config.profileName(), QString());
        QCOMPARE(config.values().size(), SettingsSchema::all().size());
        QCOMPARE(config.value(QStringLiteral("FORGE_K8S_NAMESPACE")), QStringLiteral("starforge"));
        QCOMPARE(config.source(QStringLiteral("FORGE_K8S_NAMESPACE")), ValueSource::Default);
        QCOMPARE(config.source(QStringLiteral("FORGE_K8S_API_SERVER")), ValueSource::Unset);
        QCOMPARE(config.boolean(QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH")), true);
        QCOMPARE(config.integer(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS")), 3 * 24 * 60 * 60);
        QVERIFY(config.problems().isEmpty());
    }

    void profileOverridesDefault()
    {
        const auto config = EffectiveConfig::resolve(profile(), QProcessEnvironment());
        QCOMPARE(config.profileName(), QStringLiteral("lab"));
        QCOMPARE(config.value(QStringLiteral("FORGE_K8S_NAMESPACE")), QStringLiteral("research"));
        QCOMPARE(config.source(QStringLiteral("FORGE_K8S_NAMESPACE")), ValueSource::Profile);
        QCOMPARE(config.integer(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS")), 120);
        QCOMPARE(config.source(QStringLiteral("FORGE_S3_BUCKET")), ValueSource::Default);
    }

    void environmentOverridesProfile()
    {
        QProcessEnvironment env;
        env.insert(QStringLiteral("FORGE_K8S_NAMESPACE"), QStringLiteral("from-env"));
        env.insert(QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH"), QStringLiteral("off"));
        env.insert(QStringLiteral("FORGE_S3_BUCKET"), QString()); // empty counts as unset
        env.insert(QStringLiteral("UNRELATED"), QStringLiteral("x"));
        const auto config = EffectiveConfig::resolve(profile(), env);
        QCOMPARE(config.value(QStringLiteral("FORGE_K8S_NAMESPACE")), QStringLiteral("from-env"));
        QCOMPARE(config.source(QStringLiteral("FORGE_K8S_NAMESPACE")), ValueSource::Environment);
        QCOMPARE(config.value(QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH")), QStringLiteral("false"));
        QCOMPARE(config.boolean(QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH")), false);
        QCOMPARE(config.source(QStringLiteral("FORGE_S3_BUCKET")), ValueSource::Default);
        QCOMPARE(config.source(QStringLiteral("FORGE_K8S_API_SERVER")), ValueSource::Profile);
    }

    void invalidEnvironmentIsReported()
    {
        QProcessEnvironment env;
        env.insert(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS"), QStringLiteral("soon"));
        const auto config = EffectiveConfig::resolve(profile(), env);
        QCOMPARE(config.source(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS")), ValueSource::Environment);
        const auto problems = config.problems();
        QCOMPARE(problems.size(), 1);
        QVERIFY(problems.first().message.contains(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS")));
        QVERIFY(problems.first().message.startsWith(QStringLiteral("environment variable")));
        // An invalid value is never used: the default stands in.
        QCOMPARE(config.integer(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS")), 3 * 24 * 60 * 60);
    }

    void secretsFromKeychainAndEnvironment()
    {
        const QMap<QString, QString> keychain{{QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("keychain-token-abcdef")},
                                              {QStringLiteral("FORGE_S3_ACCESS_KEY"), QStringLiteral("keychain-access")}};
        QProcessEnvironment env;
        env.insert(QStringLiteral("FORGE_S3_ACCESS_KEY"), QStringLiteral("env-access-key"));
        const auto config = EffectiveConfig::resolve(profile(), env, keychain);
        QCOMPARE(config.value(QStringLiteral("FORGE_K8S_TOKEN")), QStringLiteral("keychain-token-abcdef"));
        QCOMPARE(config.source(QStringLiteral("FORGE_K8S_TOKEN")), ValueSource::Keychain);
        QCOMPARE(config.value(QStringLiteral("FORGE_S3_ACCESS_KEY")), QStringLiteral("env-access-key"));
        QCOMPARE(config.source(QStringLiteral("FORGE_S3_ACCESS_KEY")), ValueSource::Environment);
        QCOMPARE(config.source(QStringLiteral("FORGE_S3_SECRET_KEY")), ValueSource::Unset);
        // Environment secrets can be offered for saving, and are redacted from logs from now on.
        QCOMPARE(config.environmentSecrets(), (QMap<QString, QString>{{QStringLiteral("FORGE_S3_ACCESS_KEY"), QStringLiteral("env-access-key")}}));
        QVERIFY(!Logging::redact(QStringLiteral("key is env-access-key")).contains(QStringLiteral("env-access-key")));
    }

    void sourceNames()
    {
        QCOMPARE(sourceName(ValueSource::Default), QStringLiteral("default"));
        QCOMPARE(sourceName(ValueSource::Profile), QStringLiteral("profile"));
        QCOMPARE(sourceName(ValueSource::Environment), QStringLiteral("environment"));
        QCOMPARE(sourceName(ValueSource::Keychain), QStringLiteral("keychain"));
    }
};

QTEST_GUILESS_MAIN(TestEffectiveConfig)
#include "tst_effectiveconfig.moc"
