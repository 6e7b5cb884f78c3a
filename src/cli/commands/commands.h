#pragma once

// The factories of starforge-cli's commands, one per command; CliApplication's dispatch table
// names them. Each command lives in its own file beside this one.

#include "cli/command.h"

#include <memory>

namespace Starforge::Cli {

using CommandFactory = std::unique_ptr<Command> (*)(const CommandContext &context);

std::unique_ptr<Command> makeSettingsCommand(const CommandContext &context);
std::unique_ptr<Command> makeCapsuleBuildCommand(const CommandContext &context);

// profile list | show | set | import-kubeconfig | use | rename | duplicate | delete
std::unique_ptr<Command> makeProfileListCommand(const CommandContext &context);
std::unique_ptr<Command> makeProfileShowCommand(const CommandContext &context);
std::unique_ptr<Command> makeProfileSetCommand(const CommandContext &context);
std::unique_ptr<Command> makeProfileImportCommand(const CommandContext &context);
std::unique_ptr<Command> makeProfileUseCommand(const CommandContext &context);
std::unique_ptr<Command> makeProfileRenameCommand(const CommandContext &context);
std::unique_ptr<Command> makeProfileDuplicateCommand(const CommandContext &context);
std::unique_ptr<Command> makeProfileDeleteCommand(const CommandContext &context);

// check: the connection tested part by part (server, sign-in, KubeRay, permissions, bucket)
std::unique_ptr<Command> makeCheckCommand(const CommandContext &context);
// cluster-setup: the administrator's YAML (Namespace, ServiceAccount, token, Role, ClusterRole)
std::unique_ptr<Command> makeClusterSetupCommand(const CommandContext &context);
std::unique_ptr<Command> makeManifestCommand(const CommandContext &context);
std::unique_ptr<Command> makeSubmitCommand(const CommandContext &context);
std::unique_ptr<Command> makeJobsCommand(const CommandContext &context);
std::unique_ptr<Command> makeHistoryCommand(const CommandContext &context);
std::unique_ptr<Command> makeStatusCommand(const CommandContext &context);
std::unique_ptr<Command> makeEventsCommand(const CommandContext &context);
std::unique_ptr<Command> makeDiagnoseCommand(const CommandContext &context);
std::unique_ptr<Command> makeLogsCommand(const CommandContext &context);
std::unique_ptr<Command> makeCapacityCommand(const CommandContext &context);
std::unique_ptr<Command> makeStopCommand(const CommandContext &context);
std::unique_ptr<Command> makeDeleteCommand(const CommandContext &context);
std::unique_ptr<Command> makePlaygroundLaunchCommand(const CommandContext &context);
std::unique_ptr<Command> makePlaygroundListCommand(const CommandContext &context);
std::unique_ptr<Command> makePlaygroundStopCommand(const CommandContext &context);
std::unique_ptr<Command> makePlaygroundChatCommand(const CommandContext &context);

} // namespace Starforge::Cli
