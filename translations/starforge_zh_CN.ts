<?xml version='1.0' encoding='utf-8'?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Arguments</name>
    <message>
        <source>unknown option %1; see starforge-cli --help</source>
        <translation>未知选项 %1；请参阅 starforge-cli --help</translation>
    </message>
    <message>
        <source>--%1 needs a value, e.g. --%1 NAME</source>
        <translation>--%1 需要一个值，例如 --%1 NAME</translation>
    </message>
    <message>
        <source>--%1 takes no value</source>
        <translation>--%1 不接受值</translation>
    </message>
    <message>
        <source>unknown option --%1; see starforge-cli --help</source>
        <translation>未知选项 --%1；请参阅 starforge-cli --help</translation>
    </message>
</context>
<context>
    <name>Backoff</name>
    <message>
        <source>ddd, dd MMM yyyy HH:mm:ss 'GMT'</source>
        <translation>ddd, dd MMM yyyy HH:mm:ss 'GMT'</translation>
    </message>
</context>
<context>
    <name>Capacity</name>
    <message>
        <source>not ready</source>
        <translation>未就绪</translation>
    </message>
    <message>
        <source>Ready condition not True</source>
        <translation>Ready 条件不为 True</translation>
    </message>
    <message>
        <source>the pool</source>
        <translation>该池</translation>
    </message>
    <message>
        <source>pool "%1"</source>
        <translation>池 "%1"</translation>
    </message>
    <message>
        <source>needs %1 with %2 free GPUs of %3</source>
        <translation>需要 %1，每个节点有 %2 个空闲的 %3 GPU</translation>
    </message>
    <message numerus="yes">
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n 个节点</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 can never fit: %2, and no node has the series "%3" (known series: %4)</source>
        <translation>%1永远无法容纳：%2，但没有节点属于系列 "%3"（已知系列：%4）</translation>
    </message>
    <message>
        <source>%1 can never fit: %2, and the largest %3 node has %4 GPUs</source>
        <translation>%1永远无法容纳：%2，但最大的 %3 节点只有 %4 个 GPU</translation>
    </message>
    <message>
        <source>fits now</source>
        <translation>当前可容纳</translation>
    </message>
    <message>
        <source>waits for busy nodes</source>
        <translation>需等待繁忙节点</translation>
    </message>
    <message>
        <source>can never fit</source>
        <translation>永远无法容纳</translation>
    </message>
    <message numerus="yes">
        <source>%1 %2: %3; %n has %4 free now</source>
        <translation>
            <numerusform>%1%2：%3；当前有 %n 个节点各有 %4 个空闲 GPU</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>, %n more is busy</source>
        <translation>
            <numerusform>，另有 %n 个节点繁忙</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>, %n more is cordoned, not ready or tainted</source>
        <translation>
            <numerusform>，另有 %n 个节点已封锁、未就绪或有污点</numerusform>
        </translation>
    </message>
    <message>
        <source>, %1 taken by the job's other pools</source>
        <translation>，%1已被该作业的其他池占用</translation>
    </message>
    <message>
        <source>; the series has only %1 big enough</source>
        <translation>；该系列中足够大的只有 %1</translation>
    </message>
    <message numerus="yes">
        <source>%n schedulable node(s)</source>
        <translation>
            <numerusform>%n 个可调度节点</numerusform>
        </translation>
    </message>
    <message>
        <source>; largest free node has %1</source>
        <translation>；空闲最多的节点有 %1 个空闲 GPU</translation>
    </message>
    <message>
        <source>no pools asked</source>
        <translation>未请求任何池</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>cordoned</source>
        <translation>已封锁</translation>
    </message>
    <message>
        <source>tainted</source>
        <translation>有污点</translation>
    </message>
</context>
<context>
    <name>Capsule</name>
    <message>
        <source>The capsule build was cancelled.</source>
        <translation>Capsule 构建已取消。</translation>
    </message>
    <message>
        <source>Cannot list the folder %1: %2. Make it readable or exclude it.</source>
        <translation>无法列出文件夹 %1 的内容：%2。请使其可读，或将其排除。</translation>
    </message>
    <message>
        <source>Cannot read %1: %2.</source>
        <translation>无法读取 %1：%2。</translation>
    </message>
    <message>
        <source>version control data (never packed)</source>
        <translation>版本控制数据（从不打包）</translation>
    </message>
    <message>
        <source>The name "%1" is not valid UTF-8, and zip readers would garble it. Rename it or add it to the exclude patterns.</source>
        <translation>名称 "%1" 不是有效的 UTF-8，zip 读取程序会将其显示为乱码。请将其重命名，或将其添加到排除模式中。</translation>
    </message>
    <message>
        <source>The code folder has its own %1 at its top, where the capsule puts the job's. Rename it or add "/%1" to the exclude patterns.</source>
        <translation>代码文件夹的顶层有自己的 %1，而 Capsule 会在该位置放入作业的 %1。请将其重命名，或将 "/%1" 添加到排除模式中。</translation>
    </message>
    <message>
        <source>The symbolic link %1 (-&gt; %2) is part of a loop. Fix the link or exclude it.</source>
        <translation>符号链接 %1 (-&gt; %2) 处于一个循环中。请修复该链接或将其排除。</translation>
    </message>
    <message>
        <source>The symbolic link %1 points to %2, which does not exist. Fix the link or exclude it.</source>
        <translation>符号链接 %1 指向 %2，但该目标不存在。请修复该链接或将其排除。</translation>
    </message>
    <message>
        <source>The symbolic link %1 points outside the code folder (to %2), and the cluster cannot follow it. Copy the file into the folder or exclude the link.</source>
        <translation>符号链接 %1 指向代码文件夹之外（%2），集群无法跟随它。请将该文件复制到文件夹中，或排除该链接。</translation>
    </message>
    <message>
        <source>The symbolic link %1 points to a folder; the capsule packs links to files only, as copies. Replace the link with the folder or exclude it.</source>
        <translation>符号链接 %1 指向一个文件夹；Capsule 只打包指向文件的链接，并以副本形式打包。请用该文件夹替换此链接，或将其排除。</translation>
    </message>
    <message>
        <source>%1: %2, not packed</source>
        <translation>%1：%2，未打包</translation>
    </message>
    <message>
        <source>Cannot read %1: %2. Make it readable or exclude it.</source>
        <translation>无法读取 %1：%2。请使其可读，或将其排除。</translation>
    </message>
    <message>
        <source>path</source>
        <translation>path</translation>
    </message>
    <message>
        <source>sha256</source>
        <translation>sha256</translation>
    </message>
    <message>
        <source>The capsule needs the job's jobspec.json; none was given.</source>
        <translation>Capsule 需要作业的 jobspec.json，但未提供。</translation>
    </message>
    <message>
        <source>The capsule needs runner.pex; none was given.</source>
        <translation>Capsule 需要 runner.pex，但未提供。</translation>
    </message>
    <message>
        <source>The capsule's top-level folder "%1" must be one plain name, such as "capsule".</source>
        <translation>Capsule 的顶层文件夹 "%1" 必须是单个普通名称，例如 "capsule"。</translation>
    </message>
    <message>
        <source>The compression level must be 1 to 9.</source>
        <translation>压缩级别必须为 1 到 9。</translation>
    </message>
    <message>
        <source>No output path was given for the capsule.</source>
        <translation>未指定 Capsule 的输出路径。</translation>
    </message>
    <message>
        <source>The code folder %1 does not exist.</source>
        <translation>代码文件夹 %1 不存在。</translation>
    </message>
    <message>
        <source>%1 is not a folder.</source>
        <translation>%1 不是文件夹。</translation>
    </message>
    <message>
        <source>The folder for the capsule, %1, does not exist.</source>
        <translation>用于存放 Capsule 的文件夹 %1 不存在。</translation>
    </message>
    <message>
        <source>runner.pex was not found at %1.</source>
        <translation>在 %1 处找不到 runner.pex。</translation>
    </message>
    <message>
        <source>a FIFO</source>
        <translation>FIFO 文件</translation>
    </message>
    <message>
        <source>a socket</source>
        <translation>套接字</translation>
    </message>
    <message>
        <source>a device</source>
        <translation>设备文件</translation>
    </message>
</context>
<context>
    <name>CheckpointForecast</name>
    <message>
        <source> Convert a step with NeMo-RL's %1 before the playground can serve it.</source>
        <translation> 需先用 NeMo-RL 的 %1 转换某一步，试验场才能部署它。</translation>
    </message>
    <message>
        <source>checkpoints: the config does not turn checkpointing on (checkpointing.enabled is false or missing), so this job saves nothing the playground can serve. Add ++checkpointing.enabled=true to keep its weights.</source>
        <translation>检查点：配置未开启检查点保存（checkpointing.enabled 为 false 或缺失），因此此作业不会保存任何可供试验场部署的内容。添加 ++checkpointing.enabled=true 即可保留其权重。</translation>
    </message>
    <message>
        <source>checkpoints: this job trains with Megatron (policy.megatron_cfg.enabled), which writes no Hugging Face weights, so its checkpoints will not be chat-ready.</source>
        <translation>检查点：此作业使用 Megatron 训练（policy.megatron_cfg.enabled），不会写出 Hugging Face 权重，因此其检查点无法直接用于聊天。</translation>
    </message>
    <message>
        <source>checkpoints: this job uses NeMo-RL's DTensor v1 worker (policy.dtensor_cfg._v2 is not true, as in the dpo and rm configs), which ignores save_consolidated, so its checkpoints will not be chat-ready. Add ++policy.dtensor_cfg._v2=true to get a consolidated model, or convert later.</source>
        <translation>检查点：此作业使用 NeMo-RL 的 DTensor v1 worker（policy.dtensor_cfg._v2 不为 true，与 dpo 和 rm 配置相同），它会忽略 save_consolidated，因此其检查点无法直接用于聊天。添加 ++policy.dtensor_cfg._v2=true 可获得整合后的模型，也可以稍后再转换。</translation>
    </message>
    <message>
        <source>checkpoints: with LoRA (policy.dtensor_cfg.lora_cfg.enabled) NeMo-RL saves an adapter, not a consolidated model, so its checkpoints will not be chat-ready; merge the adapter into its base model before serving it.</source>
        <translation>检查点：使用 LoRA（policy.dtensor_cfg.lora_cfg.enabled）时，NeMo-RL 保存的是适配器而非整合后的模型，因此其检查点无法直接用于聊天；部署前请先将适配器合并到其基础模型中。</translation>
    </message>
    <message>
        <source>checkpoints: checkpointing.model_save_format is %1, and NeMo-RL consolidates only safetensors checkpoints, so this job's checkpoints will not be chat-ready.</source>
        <translation>检查点：checkpointing.model_save_format 为 %1，而 NeMo-RL 只整合 safetensors 检查点，因此此作业的检查点无法直接用于聊天。</translation>
    </message>
</context>
<context>
    <name>CliOutput</name>
    <message numerus="yes">
        <source>%1 byte(s)</source>
        <comment>a size; the count decides the plural form</comment>
        <translation><numerusform>%1 字节</numerusform></translation>
    </message>
    <message>
        <source>Could not %1: the server's answer is not a Kubernetes list. Is FORGE_K8S_API_SERVER the cluster's API server?</source>
        <translation>无法%1：服务器的应答不是 Kubernetes 列表。FORGE_K8S_API_SERVER 是否为该集群的 API 服务器？</translation>
    </message>
    <message>
        <source>you</source>
        <translation>您</translation>
    </message>
    <message>
        <source> (x%1)</source>
        <translation> (x%1)</translation>
    </message>
</context>
<context>
    <name>ClusterSetup</name>
    <message>
        <source>--user %1: %2</source>
        <translation>--user %1: %2</translation>
    </message>
    <message>
        <source>--user %1 is too long for its token Secret's name: %2</source>
        <translation>--user %1 过长，无法用作其令牌 Secret 的名称：%2</translation>
    </message>
</context>
<context>
    <name>ConversationStore</name>
    <message>
        <source>(cannot be read)</source>
        <translation>（无法读取）</translation>
    </message>
    <message>
        <source>"%1" is not a conversation.</source>
        <translation>"%1" 不是对话。</translation>
    </message>
    <message>
        <source>No conversation %1 in %2.</source>
        <translation>%2 中没有对话 %1。</translation>
    </message>
    <message>
        <source>The conversation %1 cannot be read (%2); the file is kept as it is.</source>
        <translation>无法读取对话 %1（%2）；文件保持原样。</translation>
    </message>
    <message>
        <source>Cannot make %1 for the conversations.</source>
        <translation>无法为对话创建 %1。</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <source>Cannot remove %1.</source>
        <translation>无法删除 %1。</translation>
    </message>
</context>
<context>
    <name>Diagnosis</name>
    <message>
        <source>pod %1 (gone now)</source>
        <translation>Pod %1（已不存在）</translation>
    </message>
    <message>
        <source>the registry does not have it</source>
        <translation>镜像仓库中没有该镜像</translation>
    </message>
    <message>
        <source>the registry refuses access without credentials the cluster has</source>
        <translation>镜像仓库拒绝访问：集群没有所需的凭据</translation>
    </message>
    <message>
        <source>the pull failed</source>
        <translation>拉取失败</translation>
    </message>
    <message>
        <source>Image %1 cannot be pulled for container %2 of %3: %4</source>
        <translation>无法为 %3 的容器 %2 拉取镜像 %1：%4</translation>
    </message>
    <message numerus="yes">
        <source>%n attempt(s)</source>
        <translation><numerusform>尝试 %n 次</numerusform></translation>
    </message>
    <message>
        <source>; %1 pods of the job cannot pull their images</source>
        <translation>；该作业有 %1 个 Pod 无法拉取其镜像</translation>
    </message>
    <message>
        <source>The capsule download failed: init container %1 of %2 exited with code %3</source>
        <translation>Capsule 下载失败：%2 的 Init 容器 %1 以退出码 %3 退出</translation>
    </message>
    <message numerus="yes">
        <source>%n restart(s)</source>
        <translation><numerusform>重启 %n 次</numerusform></translation>
    </message>
    <message>
        <source>; the pod cannot start until it can fetch and check the Capsule</source>
        <translation>；在能够获取并校验 Capsule 之前，该 Pod 无法启动</translation>
    </message>
    <message>
        <source>The capsule download failed: init container %1 of pod %2 (gone now) kept failing</source>
        <translation>Capsule 下载失败：Pod %2（已不存在）的 Init 容器 %1 反复失败</translation>
    </message>
    <message>
        <source> of job %1</source>
        <translation> (作业 %1)</translation>
    </message>
    <message>
        <source>The capsule download failed: Ray could not fetch the working_dir%1: %2</source>
        <translation>Capsule 下载失败：Ray 无法获取 working_dir%1：%2</translation>
    </message>
    <message>
        <source>Container %1 of %2 cannot be created from its configuration: %3</source>
        <translation>无法根据配置创建 %2 的容器 %1：%3</translation>
    </message>
    <message>
        <source>A container of pod %1 (gone now) could not be created from its configuration: %2</source>
        <translation>无法根据配置创建 Pod %1（已不存在）的某个容器：%2</translation>
    </message>
    <message>
        <source>Container %1 of %2 keeps crashing</source>
        <translation>%2 的容器 %1 反复崩溃</translation>
    </message>
    <message>
        <source>: it exited with code %1</source>
        <translation>：退出码为 %1</translation>
    </message>
    <message>
        <source> and was restarted %1</source>
        <translation> (已重启 %1)</translation>
    </message>
    <message numerus="yes">
        <source>%n time(s)</source>
        <translation><numerusform>%n 次</numerusform></translation>
    </message>
    <message>
        <source>, now waiting %1 before the next try</source>
        <translation>，现在等待 %1 后再次尝试</translation>
    </message>
    <message>
        <source>; its log (previous=true) says why</source>
        <translation>；其日志（previous=true）说明了原因</translation>
    </message>
    <message>
        <source>A container of pod %1 (gone now) kept crashing: %2</source>
        <translation>Pod %1（已不存在）的某个容器反复崩溃：%2</translation>
    </message>
    <message>
        <source>Insufficient nvidia.com/gpu</source>
        <translation>Insufficient nvidia.com/gpu</translation>
    </message>
    <message>
        <source>node(s) didn't match Pod's node affinity</source>
        <translation>node(s) didn't match Pod's node affinity</translation>
    </message>
    <message>
        <source>node(s) had untolerated taint</source>
        <translation>node(s) had untolerated taint</translation>
    </message>
    <message>
        <source>node(s) had taint</source>
        <translation>node(s) had taint</translation>
    </message>
    <message>
        <source>node(s) were unschedulable</source>
        <translation>node(s) were unschedulable</translation>
    </message>
    <message>
        <source> (%1 of the job's pods cannot be scheduled)</source>
        <translation> (该作业有 %1 个 Pod 无法调度)</translation>
    </message>
    <message>
        <source>asks for %1 on %2</source>
        <translation>在 %2 上请求 %1</translation>
    </message>
    <message numerus="yes">
        <source>%n GPU(s)</source>
        <translation><numerusform>%n 个 GPU</numerusform></translation>
    </message>
    <message>
        <source>could not be placed</source>
        <translation>无法放置</translation>
    </message>
    <message>
        <source>Not enough free GPUs: %1 %2</source>
        <translation>空闲 GPU 不足：%1 %2</translation>
    </message>
    <message>
        <source>, but the largest free %1 node has %2; %3 of %4 %1 GPUs are free on %5</source>
        <translation>，但 %1 节点中单个节点最多只有 %2 个空闲 GPU；%1 GPU 共 %4 个，其中 %3 个空闲，分布在 %5上</translation>
    </message>
    <message numerus="yes">
        <source>%n schedulable node(s)</source>
        <translation><numerusform>%n 个可调度节点</numerusform></translation>
    </message>
    <message>
        <source>, %1 more blocked</source>
        <translation>，另有 %1 个受阻</translation>
    </message>
    <message>
        <source>, and %1 too few free</source>
        <translation>，且有 %1的空闲 GPU 不足</translation>
    </message>
    <message numerus="yes">
        <source>%n node has</source>
        <translation><numerusform>%n 个节点</numerusform></translation>
    </message>
    <message>
        <source>No node matches the selector: %1 asks for %2, and none of the %3 has it</source>
        <translation>没有节点匹配选择器：%1 要求 %2，但 %3中没有一个满足</translation>
    </message>
    <message>
        <source>a node affinity</source>
        <translation>一项节点亲和性</translation>
    </message>
    <message numerus="yes">
        <source>%n node(s)</source>
        <translation><numerusform>%n 个节点</numerusform></translation>
    </message>
    <message>
        <source>; known series: %1</source>
        <translation>；已知系列：%1</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>, </source>
        <translation>, </translation>
    </message>
    <message>
        <source>; the scheduler's other reasons matter only once a node has series %1</source>
        <translation>；只有当某个节点具有系列 %1 时，调度器给出的其他原因才有意义</translation>
    </message>
    <message>
        <source>; %1 asked</source>
        <translation>；请求了 %1</translation>
    </message>
    <message>
        <source>A taint keeps the pod off: %1 %2, and a taint it does not tolerate rules out %3 of %4 (%5)</source>
        <translation>污点阻止了该 Pod：%1 %2，而 %4中有 %3 个因带有其不容忍的污点而被排除（%5）</translation>
    </message>
    <message>
        <source>Nodes are cordoned: %1 %2, and %3 of %4 are cordoned (unschedulable)</source>
        <translation>节点已封锁：%1 %2，而 %4中有 %3 个已封锁（不可调度）</translation>
    </message>
    <message>
        <source>No known cause: %1 cannot be scheduled for a reason outside the GPU checks</source>
        <translation>无已知原因：%1 因 GPU 检查范围之外的原因无法调度</translation>
    </message>
    <message>
        <source>the head pod</source>
        <translation>head Pod</translation>
    </message>
    <message>
        <source>a worker pod</source>
        <translation>某个 worker Pod</translation>
    </message>
    <message>
        <source>the submitter pod</source>
        <translation>提交器 Pod</translation>
    </message>
    <message>
        <source>The API server refused to create %1, so it does not exist: %2</source>
        <translation>API 服务器拒绝创建 %1，因此它不存在：%2</translation>
    </message>
    <message>
        <source>%1: asks %2, %3 already used of %4</source>
        <translation>%1：请求 %2，上限 %4 中已用 %3</translation>
    </message>
    <message>
        <source>?</source>
        <translation>?</translation>
    </message>
    <message>
        <source>ResourceQuota %1%2 does not allow %3 (%4), so the API server refused to create it. Ask for less, wait for other pods of the namespace to finish, or ask the cluster's administrator to raise the quota</source>
        <translation>ResourceQuota %1%2 不允许创建 %3（%4），因此 API 服务器拒绝了创建。请减少请求量、等待命名空间中的其他 Pod 结束，或请集群管理员提高配额</translation>
    </message>
    <message>
        <source> in namespace %1</source>
        <translation> (命名空间 %1)</translation>
    </message>
    <message>
        <source>no pods</source>
        <translation>没有 Pod</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message numerus="yes">
        <source>%n pod(s)</source>
        <translation><numerusform>%n 个 Pod</numerusform></translation>
    </message>
    <message>
        <source>No known cause found: </source>
        <translation>未找到已知原因： </translation>
    </message>
    <message>
        <source>; </source>
        <translation>; </translation>
    </message>
    <message>
        <source>Job %1 did not reach Running within its pre-running deadline</source>
        <translation>作业 %1 未能进入 Running 状态，已超过其运行前截止时间</translation>
    </message>
    <message>
        <source> and was failed</source>
        <translation> (已被标记为失败)</translation>
    </message>
    <message>
        <source>. Before that: </source>
        <translation>。在此之前： </translation>
    </message>
    <message>
        <source>Job %1 was never handed to Ray: its submitter gave up</source>
        <translation>作业 %1 从未交给 Ray：其提交器已放弃</translation>
    </message>
    <message>
        <source> after %1</source>
        <translation> (此前 %1)</translation>
    </message>
    <message numerus="yes">
        <source>%n failed pod(s)</source>
        <translation><numerusform>%n 个 Pod 失败</numerusform></translation>
    </message>
    <message>
        <source>, the last exiting with code %1</source>
        <translation>，最后一个 Pod 的退出码为 %1</translation>
    </message>
    <message>
        <source>the head pod %1</source>
        <translation>head Pod %1</translation>
    </message>
    <message>
        <source>the worker %1 pod %2</source>
        <translation>worker 组 %1 的 Pod %2</translation>
    </message>
    <message>
        <source>the submitter pod %1</source>
        <translation>提交器 Pod %1</translation>
    </message>
    <message>
        <source>pod %1</source>
        <translation>Pod %1</translation>
    </message>
    <message>
        <source>the %1 pod %2</source>
        <translation>%1 Pod %2</translation>
    </message>
    <message>
        <source>. Kubelet: %1</source>
        <translation>。Kubelet：%1</translation>
    </message>
    <message>
        <source>a node</source>
        <translation>一个节点</translation>
    </message>
    <message>
        <source>one %1 node</source>
        <translation>一个 %1 节点</translation>
    </message>
    <message>
        <source>. Scheduler: %1</source>
        <translation>。调度器：%1</translation>
    </message>
    <message>
        <source> of %1 s</source>
        <translation> (%1 秒)</translation>
    </message>
</context>
<context>
    <name>Digest</name>
    <message>
        <source>cannot read %1 to hash it: %2</source>
        <translation>无法读取 %1 以计算其哈希值：%2</translation>
    </message>
</context>
<context>
    <name>EffectiveConfig</name>
    <message>
        <source>unset</source>
        <translation>未设置</translation>
    </message>
    <message>
        <source>default</source>
        <translation>默认值</translation>
    </message>
    <message>
        <source>profile</source>
        <translation>配置文件</translation>
    </message>
    <message>
        <source>environment</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <source>keychain</source>
        <translation>钥匙串</translation>
    </message>
    <message>
        <source>environment variable %1</source>
        <extracomment>%1: the problem, starting with the variable's name ("FORGE_K8S_SHM_SIZE: ...")</extracomment>
        <translation>环境变量 %1</translation>
    </message>
</context>
<context>
    <name>ExecPlugin</name>
    <message>
        <source>the exec plugin asks for client.authentication.k8s.io/v1alpha1, which Kubernetes removed in 1.24; use v1 (or v1beta1) in the kubeconfig's user.exec.apiVersion</source>
        <translation>exec 插件要求 client.authentication.k8s.io/v1alpha1，而 Kubernetes 已在 1.24 中将其移除；请在 kubeconfig 的 user.exec.apiVersion 中使用 v1（或 v1beta1）</translation>
    </message>
    <message>
        <source>the exec plugin's apiVersion must be %1 or %2, not '%3'</source>
        <translation>exec 插件的 apiVersion 必须为 %1 或 %2，而不是 '%3'</translation>
    </message>
    <message>
        <source>the exec plugin has no command; give the program that prints the credential</source>
        <translation>exec 插件没有 command；请提供输出凭据的程序</translation>
    </message>
    <message>
        <source>the exec plugin's args must be a list of strings</source>
        <translation>exec 插件的 args 必须是字符串列表</translation>
    </message>
    <message>
        <source>the exec plugin's env must be a list of {name, value}</source>
        <translation>exec 插件的 env 必须是 {name, value} 列表</translation>
    </message>
    <message>
        <source>every entry of the exec plugin's env needs a name (without '=') and a value</source>
        <translation>exec 插件 env 中的每一项都需要 name（不含 '='）和 value</translation>
    </message>
    <message>
        <source>the exec plugin's interactiveMode must be Never, IfAvailable or Always, not '%1'</source>
        <translation>exec 插件的 interactiveMode 必须为 Never、IfAvailable 或 Always，而不是 '%1'</translation>
    </message>
    <message>
        <source>the exec plugin is not a JSON object (%1); write it as the kubeconfig's user.exec in JSON, e.g. {"apiVersion": "%2", "command": "aws", "args": ["eks", "get-token"]}</source>
        <translation>exec 插件不是 JSON 对象（%1）；请按 kubeconfig 的 user.exec 以 JSON 格式填写，例如 {"apiVersion": "%2", "command": "aws", "args": ["eks", "get-token"]}</translation>
    </message>
    <message>
        <source>not an object</source>
        <translation>不是对象</translation>
    </message>
</context>
<context>
    <name>HydraOverride</name>
    <message>
        <source>"%1" has an empty key: Hydra's grammar lets it through, but no config has one (write key=value, e.g. grpo.max_num_steps=10).</source>
        <translation>"%1" 的键为空：Hydra 的语法允许这样写，但没有任何配置含有空键（请写成 key=value，例如 grpo.max_num_steps=10）。</translation>
    </message>
    <message>
        <source>quote the value: %1%2, or escape the character with \</source>
        <translation>请给值加引号：%1%2，或用 \ 转义该字符</translation>
    </message>
    <message>
        <source>write key=value, +key=value, ++key=value or ~key; a key is like grpo.max_num_steps, server/db or db@package: letters, digits, '_', '-', '$' and '.', no spaces</source>
        <translation>请写成 key=value、+key=value、++key=value 或 ~key；键形如 grpo.max_num_steps、server/db 或 db@package：字母、数字、'_'、'-'、'$' 和 '.'，不含空格</translation>
    </message>
    <message>
        <source>Hydra cannot parse "%1": %2 (character %3; %4).</source>
        <translation>Hydra 无法解析 "%1"：%2（第 %3 个字符；%4）。</translation>
    </message>
    <message>
        <source>Hydra cannot parse "%1": Trying to parse a primitive that is all whitespaces (character %2; quote it).</source>
        <translation>Hydra 无法解析 "%1"：Trying to parse a primitive that is all whitespaces（第 %2 个字符；请加引号）。</translation>
    </message>
    <message>
        <source>"%1" is a sweep over %2 values (Hydra: Ambiguous value for argument '%1'); sweeps are for --multirun and a job runs once: for a list write %3[%4], for a string quote it: %3%5.</source>
        <translation>"%1" 是对 %2 个值的扫描（Hydra: Ambiguous value for argument '%1'）；扫描用于 --multirun，而作业只运行一次：列表请写成 %3[%4]，字符串请加引号：%3%5。</translation>
    </message>
    <message>
        <source>"%1" is a sweep (%2; Hydra: Sweep parameters '%1' requires --multirun); sweeps are for --multirun and a job runs once: give one value.</source>
        <translation>"%1" 是一个扫描（%2；Hydra: Sweep parameters '%1' requires --multirun）；扫描用于 --multirun，而作业只运行一次：请只给出一个值。</translation>
    </message>
    <message>
        <source>"%1" holds a sweep inside a list or dict; sweeps are for --multirun and a job runs once: give one value.</source>
        <translation>"%1" 在列表或字典中包含扫描；扫描用于 --multirun，而作业只运行一次：请只给出一个值。</translation>
    </message>
</context>
<context>
    <name>IgnoreRules</name>
    <message>
        <source>%1 (exclude pattern)</source>
        <translation>%1（排除模式）</translation>
    </message>
    <message>
        <source>%1 (.gitignore in %2/)</source>
        <translation>%1（%2/ 中的 .gitignore）</translation>
    </message>
</context>
<context>
    <name>Informer</name>
    <message>
        <source>"items" is not a list</source>
        <translation>"items" 不是列表</translation>
    </message>
    <message>
        <source>an item of the list does not end where its object does</source>
        <translation>列表中的某一项没有在其对象结束的位置结束</translation>
    </message>
</context>
<context>
    <name>JobRecord</name>
    <message>
        <source>%1 (being deleted)</source>
        <translation>%1（正在删除）</translation>
    </message>
    <message>
        <source>Stopping (being deleted)</source>
        <translation>Stopping（正在删除）</translation>
    </message>
    <message>
        <source>not a Starforge job record (format is "%1", expected "starforge-job/1")</source>
        <translation>不是 Starforge 作业记录（format 为 "%1"，应为 "starforge-job/1"）</translation>
    </message>
    <message>
        <source>a job record without an id or a known state</source>
        <translation>作业记录缺少 id 或已知的状态</translation>
    </message>
</context>
<context>
    <name>JobSnapshot</name>
    <message>
        <source>find job %1</source>
        <translation>查找作业 %1</translation>
    </message>
    <message>
        <source>list the job's pods</source>
        <translation>列出作业的 Pod</translation>
    </message>
    <message>
        <source>list events</source>
        <translation>列出事件</translation>
    </message>
    <message>
        <source>unexpected answer from the API server</source>
        <translation>API 服务器返回了意外的应答</translation>
    </message>
    <message>
        <source>read the submitter's log</source>
        <translation>读取提交器的日志</translation>
    </message>
</context>
<context>
    <name>JobSpec</name>
    <message>
        <source>%1%2: unknown field; known fields are %3.</source>
        <translation>%1%2: 未知字段；已知字段为 %3。</translation>
    </message>
    <message>
        <source>an object</source>
        <translation>对象</translation>
    </message>
    <message>
        <source>%1%2: required.</source>
        <translation>%1%2: 必填。</translation>
    </message>
    <message>
        <source>%1%2: must be a string, not %3.</source>
        <translation>%1%2: 必须是字符串，而不是 %3。</translation>
    </message>
    <message>
        <source>%1%2: must be a whole number, not %3.</source>
        <translation>%1%2: 必须是整数，而不是 %3。</translation>
    </message>
    <message>
        <source>%1%2: must be true or false, not %3.</source>
        <translation>%1%2: 必须是 true 或 false，而不是 %3。</translation>
    </message>
    <message>
        <source>%1%2: must be a list of strings, not %3.</source>
        <translation>%1%2: 必须是字符串列表，而不是 %3。</translation>
    </message>
    <message>
        <source>%1%2[%3]: must be a string, not %4.</source>
        <translation>%1%2[%3]: 必须是字符串，而不是 %4。</translation>
    </message>
    <message>
        <source>its config has no policy.generation, so the generation pool's overrides would make a partial one that NeMo-RL's config check refuses (backend and max_new_tokens missing), after the job has waited for its GPUs.</source>
        <translation>其配置中没有 policy.generation，因此生成池的覆盖项会生成一个不完整的配置，NeMo-RL 的配置检查会拒绝它（缺少 backend 和 max_new_tokens），而这要等作业等到其 GPU 之后才会发生。</translation>
    </message>
    <message>
        <source>NeMo-RL's PPO requires colocated generation (it asserts policy.generation.colocated.enabled).</source>
        <translation>NeMo-RL 的 PPO 要求共置生成（它会断言 policy.generation.colocated.enabled）。</translation>
    </message>
    <message>
        <source>the config %1 sets policy.generation.backend: %2</source>
        <translation>配置 %1 设置了 policy.generation.backend: %2</translation>
    </message>
    <message>
        <source>the overrides set policy.generation.backend=%1</source>
        <translation>覆盖项设置了 policy.generation.backend=%1</translation>
    </message>
    <message>
        <source>it asserts "Non-colocated inference is not supported for Megatron generation backends. Please use vLLM backend for generation."</source>
        <translation>它会断言 "Non-colocated inference is not supported for Megatron generation backends. Please use vLLM backend for generation."</translation>
    </message>
    <message>
        <source>its setup makes a generation engine for vllm and megatron only</source>
        <translation>其初始化只为 vllm 和 megatron 创建生成引擎</translation>
    </message>
    <message>
        <source>NeMo-RL's distillation generates on a separate pool only with the vLLM backend (%1), and %2.</source>
        <translation>NeMo-RL 的 distillation 只有在使用 vLLM 后端时才会在单独的池上生成（%1），而%2。</translation>
    </message>
    <message>
        <source>The JobSpec is not valid JSON: %1 at byte %2.</source>
        <translation>JobSpec 不是有效的 JSON：%1，位于第 %2 字节。</translation>
    </message>
    <message>
        <source>The JobSpec must be a JSON object.</source>
        <translation>JobSpec 必须是 JSON 对象。</translation>
    </message>
    <message>
        <source>version: required; this app writes and reads version %1.</source>
        <translation>version: 必填；此应用读写的是版本 %1。</translation>
    </message>
    <message>
        <source>version: %1 is not supported; this app reads version %2.</source>
        <translation>version: 不支持 %1；此应用读取的是版本 %2。</translation>
    </message>
    <message>
        <source>recipe: required, an object with algorithm (or script), config and overrides.</source>
        <translation>recipe: 必填，一个包含 algorithm（或 script）、config 和 overrides 的对象。</translation>
    </message>
    <message>
        <source>env.%1: must be a string (quote numbers), not %2.</source>
        <translation>env.%1: 必须是字符串（数字请加引号），而不是 %2。</translation>
    </message>
    <message>
        <source>env: must be an object of names to strings, not %1.</source>
        <translation>env: 必须是由名称映射到字符串的对象，而不是 %1。</translation>
    </message>
    <message>
        <source>secretEnv.%1: must be {"secret": NAME, "key": KEY} naming a Kubernetes Secret, not %2; the value itself never goes in the JobSpec.</source>
        <translation>secretEnv.%1: 必须是指定某个 Kubernetes Secret 的 {"secret": NAME, "key": KEY}，而不是 %2；值本身永远不会写入 JobSpec。</translation>
    </message>
    <message>
        <source>secretEnv: must be an object of names to {"secret": NAME, "key": KEY}, not %1.</source>
        <translation>secretEnv: 必须是由名称映射到 {"secret": NAME, "key": KEY} 的对象，而不是 %1。</translation>
    </message>
    <message>
        <source>pools: required, a list like [{"name": "train", "series": "h200", "nodes": 1, "gpusPerNode": 8}].</source>
        <translation>pools: 必填，一个形如 [{"name": "train", "series": "h200", "nodes": 1, "gpusPerNode": 8}] 的列表。</translation>
    </message>
    <message>
        <source>pools[%1]: must be an object, not %2.</source>
        <translation>pools[%1]: 必须是对象，而不是 %2。</translation>
    </message>
    <message>
        <source>name: "%1" must be 1-%2 characters of lowercase letters, digits and '-', start with a letter and end with a letter or digit (it becomes the RayJob's name).</source>
        <translation>name: "%1" 必须由 1-%2 个小写字母、数字和 '-' 组成，以字母开头，并以字母或数字结尾（它将成为 RayJob 的名称）。</translation>
    </message>
    <message>
        <source>code: must name the code folder ("." for the JobSpec's own folder).</source>
        <translation>code: 必须指定代码文件夹（"." 表示 JobSpec 自身所在的文件夹）。</translation>
    </message>
    <message>
        <source>recipe: give either algorithm (%1) or script, not both or neither.</source>
        <translation>recipe: 请提供 algorithm（%1）或 script 二者之一，不能都提供，也不能都不提供。</translation>
    </message>
    <message>
        <source>recipe.algorithm: "%1" is not one of %2; use script for another entry point.</source>
        <translation>recipe.algorithm: "%1" 不在 %2 之中；其他入口点请使用 script。</translation>
    </message>
    <message>
        <source>recipe.script: "%1" must be a .py path without "..".</source>
        <translation>recipe.script: "%1" 必须是不含 ".." 的 .py 路径。</translation>
    </message>
    <message>
        <source>recipe.config: required, the YAML config inside the code folder.</source>
        <translation>recipe.config: 必填，代码文件夹中的 YAML 配置。</translation>
    </message>
    <message>
        <source>recipe.config: "%1" must be a path inside the code folder (relative, without ".."), since it ships in the Capsule.</source>
        <translation>recipe.config: "%1" 必须是代码文件夹内的路径（相对路径，不含 ".."），因为它会随 Capsule 一起传送。</translation>
    </message>
    <message>
        <source>recipe.overrides[%1]: must be one line.</source>
        <translation>recipe.overrides[%1]: 必须为单行。</translation>
    </message>
    <message>
        <source>recipe.overrides[%1]: %2</source>
        <translation>recipe.overrides[%1]: %2</translation>
    </message>
    <message>
        <source>env.%1: not a valid environment variable name (letters, digits, '_', not starting with a digit).</source>
        <translation>env.%1: 不是有效的环境变量名（字母、数字、'_'，不能以数字开头）。</translation>
    </message>
    <message>
        <source>env.%1: names starting with RAY_ or FORGE_ are set by Ray and Starforge; choose another name.</source>
        <translation>env.%1: 以 RAY_ 或 FORGE_ 开头的名称由 Ray 和 Starforge 设置；请换一个名称。</translation>
    </message>
    <message>
        <source>secretEnv.%1: not a valid environment variable name (letters, digits, '_', not starting with a digit).</source>
        <translation>secretEnv.%1: 不是有效的环境变量名（字母、数字、'_'，不能以数字开头）。</translation>
    </message>
    <message>
        <source>secretEnv.%1: names starting with RAY_ or FORGE_ are set by Ray and Starforge; choose another name.</source>
        <translation>secretEnv.%1: 以 RAY_ 或 FORGE_ 开头的名称由 Ray 和 Starforge 设置；请换一个名称。</translation>
    </message>
    <message>
        <source>secretEnv.%1: also set in env; give it in one of them.</source>
        <translation>secretEnv.%1: 也在 env 中设置了；请只在其中之一中提供。</translation>
    </message>
    <message>
        <source>secretEnv.%1.secret: "%2" is not a Secret name (lowercase letters, digits, '-' and '.').</source>
        <translation>secretEnv.%1.secret: "%2" 不是有效的 Secret 名称（小写字母、数字、'-' 和 '.'）。</translation>
    </message>
    <message>
        <source>secretEnv.%1.key: "%2" is not a Secret key (letters, digits, '-', '_' and '.').</source>
        <translation>secretEnv.%1.key: "%2" 不是有效的 Secret 键（字母、数字、'-'、'_' 和 '.'）。</translation>
    </message>
    <message>
        <source>pools: at least one pool is needed (the first is where the Ray head runs).</source>
        <translation>pools: 至少需要一个池（Ray head 运行在第一个池上）。</translation>
    </message>
    <message>
        <source>pools: at most two pools, training and generation (NeMo-RL's non-colocated generation); %1 given.</source>
        <translation>pools: 最多两个池，分别用于训练和生成（NeMo-RL 的非共置生成）；当前提供了 %1 个。</translation>
    </message>
    <message>
        <source>pools[%1].name: "%2" must be 1-15 lowercase letters, digits or '-' (it names the worker group).</source>
        <translation>pools[%1].name: "%2" 必须由 1-15 个小写字母、数字或 '-' 组成（它将用作 worker 组的名称）。</translation>
    </message>
    <message>
        <source>pools[%1].name: "%2" is used twice.</source>
        <translation>pools[%1].name: "%2" 被使用了两次。</translation>
    </message>
    <message>
        <source>pools[%1].series: "%2" is not a node label value (up to 63 letters, digits, '-', '_', '.').</source>
        <translation>pools[%1].series: "%2" 不是有效的节点标签值（最多 63 个字母、数字、'-'、'_'、'.'）。</translation>
    </message>
    <message>
        <source>pools[%1].nodes: must be between 1 and 1024, not %2.</source>
        <translation>pools[%1].nodes: 必须介于 1 到 1024 之间，而不是 %2。</translation>
    </message>
    <message>
        <source>pools[%1].gpusPerNode: must be between 1 and 64, not %2.</source>
        <translation>pools[%1].gpusPerNode: 必须介于 1 到 64 之间，而不是 %2。</translation>
    </message>
    <message>
        <source>pools[1]: %1 takes one pool; %2 Remove the second pool, or choose grpo, vlm_grpo or distillation.</source>
        <translation>pools[1]: %1 只使用一个池；%2 请删除第二个池，或选择 grpo、vlm_grpo 或 distillation。</translation>
    </message>
    <message>
        <source>pools[1].gpusPerNode: must equal pools[0].gpusPerNode (%1): NeMo-RL requires dedicated generation nodes to have as many GPUs as the training nodes.</source>
        <translation>pools[1].gpusPerNode: 必须等于 pools[0].gpusPerNode（%1）：NeMo-RL 要求专用生成节点的 GPU 数与训练节点相同。</translation>
    </message>
    <message>
        <source>pools: training on %1 and generation on %2 is a request Ray may not honour: NeMo-RL's placement groups ask only for CPUs and GPUs, so training can land on the %2 nodes and generation on the %1 nodes. Pools of one series are exact.</source>
        <translation>pools: 在 %1 上训练、在 %2 上生成，Ray 未必会遵守此要求：NeMo-RL 的放置组只请求 CPU 和 GPU，因此训练可能落在 %2 节点上，生成可能落在 %1 节点上。只使用同一系列的池则可以精确放置。</translation>
    </message>
    <message>
        <source>pools: this job runs on %1 nodes, but the storage is not shared between nodes (FORGE_K8S_STORAGE_SHARED=false): checkpoints written on one node would be missing on the others. Use one node, or a ReadWriteMany volume and set FORGE_K8S_STORAGE_SHARED=true.</source>
        <translation>pools: 此作业在 %1 个节点上运行，但存储未在节点间共享（FORGE_K8S_STORAGE_SHARED=false）：在一个节点上写入的检查点在其他节点上将不存在。请只使用一个节点，或使用 ReadWriteMany 卷并设置 FORGE_K8S_STORAGE_SHARED=true。</translation>
    </message>
    <message>
        <source>corpus: the job asks for the corpus volume, but the profile has none; set FORGE_K8S_CORPUS_PVC or set corpus to false.</source>
        <translation>corpus: 作业请求了语料卷，但配置文件中没有；请设置 FORGE_K8S_CORPUS_PVC，或将 corpus 设为 false。</translation>
    </message>
    <message>
        <source>Cannot read the JobSpec %1: %2.</source>
        <translation>无法读取 JobSpec %1：%2。</translation>
    </message>
    <message>
        <source>The JobSpec %1 is larger than 4 MiB; it should describe the job, not carry data.</source>
        <translation>JobSpec %1 大于 4 MiB；它应当描述作业，而不是携带数据。</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>%1: code: the folder %2 does not exist (paths are relative to the JobSpec's folder).</source>
        <translation>%1: code: 文件夹 %2 不存在（路径相对于 JobSpec 所在的文件夹）。</translation>
    </message>
    <message>
        <source>%1: recipe.config: %2 is not a file in the code folder %3.</source>
        <translation>%1: recipe.config: %2 不是代码文件夹 %3 中的文件。</translation>
    </message>
    <message numerus="yes">
        <source>The JobSpec has %n problem(s):</source>
        <translation><numerusform>JobSpec 有 %n 个问题：</numerusform></translation>
    </message>
</context>
<context>
    <name>Jobactions</name>
    <message>
        <source>RayJob %1 was not made by Starforge (it lacks the %2=%3 label); Starforge does not %4 it (kubectl delete rayjob %1 -n %5 would)</source>
        <translation>RayJob %1 不是由 Starforge 创建的（缺少 %2=%3 标签）；Starforge 不会%4它（可以用 kubectl delete rayjob %1 -n %5 删除）</translation>
    </message>
    <message>
        <source>Could not read job %1: the server's answer is not a RayJob. Is FORGE_K8S_API_SERVER the cluster's API server?</source>
        <translation>无法读取作业 %1：服务器的应答不是 RayJob。FORGE_K8S_API_SERVER 是否为集群的 API 服务器？</translation>
    </message>
    <message>
        <source>job %1 is neither on the cluster nor in the job history</source>
        <translation>作业 %1 既不在集群上，也不在作业历史中</translation>
    </message>
    <message>
        <source>mark RayJob %1 for deletion</source>
        <translation>将 RayJob %1 标记为待删除</translation>
    </message>
</context>
<context>
    <name>Kube</name>
    <message>
        <source>The cluster did not accept the token (401 Unauthorized) when trying to %1. The token is wrong or has expired: set a current one in the profile (FORGE_K8S_TOKEN).</source>
        <translation>尝试%1时，集群不接受该令牌（401 Unauthorized）。令牌错误或已过期：请在配置文件中设置当前有效的令牌（FORGE_K8S_TOKEN）。</translation>
    </message>
    <message>
        <source>Not allowed to %1: %2. Ask the cluster's administrator for this permission (see docs/kubernetes.md for the Role Starforge needs).</source>
        <translation>无权%1：%2。请向集群管理员申请此权限（Starforge 所需的 Role 见 docs/kubernetes.md）。</translation>
    </message>
    <message>
        <source>403 Forbidden</source>
        <translation>403 Forbidden</translation>
    </message>
    <message>
        <source>Could not %1: not found on the server.</source>
        <translation>无法%1：服务器上不存在。</translation>
    </message>
    <message>
        <source>Could not %1: %2.</source>
        <translation>无法%1：%2。</translation>
    </message>
    <message>
        <source>The server's history no longer reaches back far enough to %1 (%2); starting over.</source>
        <translation>服务器的历史记录已无法回溯到足以%1的位置（%2）；正在重新开始。</translation>
    </message>
    <message>
        <source>The API server is rate-limiting requests (429) while trying to %1; retrying later.</source>
        <translation>尝试%1时，API 服务器正在对请求限流（429）；稍后重试。</translation>
    </message>
    <message>
        <source>The API server failed (%1) while trying to %2%3.</source>
        <translation>尝试%2时 API 服务器出错（%1）%3。</translation>
    </message>
    <message>
        <source>Could not %1: %2</source>
        <translation>无法%1：%2</translation>
    </message>
    <message>
        <source>HTTP %1</source>
        <translation>HTTP %1</translation>
    </message>
    <message>
        <source>Cannot read %1: %2.</source>
        <translation>无法读取 %1：%2。</translation>
    </message>
    <message>
        <source>%1 gives a client key but no certificate; set FORGE_K8S_CLIENT_CERT_FILE or FORGE_K8S_CLIENT_CERT_DATA.</source>
        <translation>%1 提供了客户端密钥但没有证书；请设置 FORGE_K8S_CLIENT_CERT_FILE 或 FORGE_K8S_CLIENT_CERT_DATA。</translation>
    </message>
    <message>
        <source>%1 gives a client certificate but no key; set FORGE_K8S_CLIENT_KEY_FILE or FORGE_K8S_CLIENT_KEY_DATA (kept in the keychain).</source>
        <translation>%1 提供了客户端证书但没有密钥；请设置 FORGE_K8S_CLIENT_KEY_FILE 或 FORGE_K8S_CLIENT_KEY_DATA（保存在钥匙串中）。</translation>
    </message>
    <message>
        <source>ask the cluster who you are (SelfSubjectReview)</source>
        <translation>向集群查询您的身份（SelfSubjectReview）</translation>
    </message>
    <message>
        <source>a watch event is not a JSON object (%1 at byte %2)</source>
        <translation>监视事件不是 JSON 对象（%1，位于第 %2 字节）</translation>
    </message>
    <message>
        <source>a watch event has the unknown type "%1"</source>
        <translation>监视事件的类型 "%1" 未知</translation>
    </message>
    <message>
        <source>a %1 watch event carries no object</source>
        <translation>%1 监视事件不含任何对象</translation>
    </message>
    <message>
        <source>a watch event is longer than %1 MiB</source>
        <translation>监视事件超过 %1 MiB</translation>
    </message>
    <message>
        <source>The API server's answer to %1 could not be read: %2.</source>
        <translation>无法读取 API 服务器对 %1 的应答：%2。</translation>
    </message>
    <message>
        <source>No API server is set. Set FORGE_K8S_API_SERVER in the profile, or import a kubeconfig context.</source>
        <translation>未设置 API 服务器。请在配置文件中设置 FORGE_K8S_API_SERVER，或导入 kubeconfig 上下文。</translation>
    </message>
    <message>
        <source>FORGE_K8S_API_SERVER "%1" is not an http(s) URL with a host.</source>
        <translation>FORGE_K8S_API_SERVER "%1" 不是带主机名的 http(s) URL。</translation>
    </message>
    <message>
        <source>FORGE_K8S_API_SERVER "%1" is plain http:// to another machine, which would send the token unencrypted. Use the server's https:// address, or run `kubectl proxy` and give http://127.0.0.1:8001.</source>
        <translation>FORGE_K8S_API_SERVER "%1" 是指向另一台机器的明文 http:// 地址，会以未加密方式发送令牌。请使用服务器的 https:// 地址，或运行 `kubectl proxy` 并填写 http://127.0.0.1:8001。</translation>
    </message>
    <message>
        <source>FORGE_K8S_EXEC: %1</source>
        <translation>FORGE_K8S_EXEC: %1</translation>
    </message>
    <message>
        <source>Cannot read the token file %1 (FORGE_K8S_TOKEN_FILE): %2.</source>
        <translation>无法读取令牌文件 %1（FORGE_K8S_TOKEN_FILE）：%2。</translation>
    </message>
    <message>
        <source>No credential is set for %1. Import a kubeconfig context, or set FORGE_K8S_TOKEN (kept in the keychain), FORGE_K8S_TOKEN_FILE, a client certificate and key (FORGE_K8S_CLIENT_CERT_FILE and FORGE_K8S_CLIENT_KEY_FILE) or an exec plugin (FORGE_K8S_EXEC).</source>
        <translation>未为 %1 设置凭据。请导入 kubeconfig 上下文，或设置 FORGE_K8S_TOKEN（保存在钥匙串中）、FORGE_K8S_TOKEN_FILE、客户端证书和密钥（FORGE_K8S_CLIENT_CERT_FILE 和 FORGE_K8S_CLIENT_KEY_FILE）或 exec 插件（FORGE_K8S_EXEC）。</translation>
    </message>
    <message>
        <source>Could not %1: the API server's answer is larger than %2 MiB, the most Starforge reads into memory. Ask for less (a label selector, a smaller page, tailLines).</source>
        <translation>无法%1：API 服务器的应答超过 %2 MiB，这是 Starforge 读入内存的上限。请减少请求的数据量（使用标签选择器、较小的分页或 tailLines）。</translation>
    </message>
    <message>
        <source>Could not %1: writing it to disk failed (%2). Free some space in the temporary folder and try again.</source>
        <translation>无法%1：写入磁盘失败（%2）。请释放临时文件夹所在磁盘的空间，然后重试。</translation>
    </message>
    <message>
        <source>The API server closed the connection without an answer.</source>
        <translation>API 服务器未应答就关闭了连接。</translation>
    </message>
</context>
<context>
    <name>Kubeconfig</name>
    <message>
        <source>%1 and %2</source>
        <translation>%1 和 %2</translation>
    </message>
    <message>
        <source>the kubeconfig %1 does not exist; give its path, e.g. ~/.kube/config</source>
        <translation>kubeconfig %1 不存在；请提供其路径，例如 ~/.kube/config</translation>
    </message>
    <message>
        <source>cannot read the kubeconfig %1: %2</source>
        <translation>无法读取 kubeconfig %1：%2</translation>
    </message>
    <message>
        <source>none of the kubeconfig files exist: %1</source>
        <translation>所有 kubeconfig 文件均不存在：%1</translation>
    </message>
    <message>
        <source>the kubeconfig</source>
        <translation>该 kubeconfig</translation>
    </message>
    <message>
        <source>%1 is not a kubeconfig: its top level is not a mapping</source>
        <translation>%1 不是 kubeconfig：其顶层不是映射</translation>
    </message>
    <message>
        <source>the auth provider '%1'</source>
        <translation>认证提供程序 '%1'</translation>
    </message>
    <message>
        <source>basic authentication (username and password)</source>
        <translation>基本认证（用户名和密码）</translation>
    </message>
    <message>
        <source>%1 is not valid YAML: %2</source>
        <translation>%1 不是有效的 YAML：%2</translation>
    </message>
    <message>
        <source>the kubeconfig has no current-context; choose one of: %1</source>
        <translation>kubeconfig 没有 current-context；请从以下上下文中选择一个：%1</translation>
    </message>
    <message>
        <source>the kubeconfig has no context '%1'; it has: %2</source>
        <translation>kubeconfig 中没有上下文 '%1'；现有上下文：%2</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>context '%1' names the cluster '%2', which the kubeconfig does not define</source>
        <translation>上下文 '%1' 指定的集群 '%2' 未在 kubeconfig 中定义</translation>
    </message>
    <message>
        <source>context '%1' names the user '%2', which the kubeconfig does not define</source>
        <translation>上下文 '%1' 指定的用户 '%2' 未在 kubeconfig 中定义</translation>
    </message>
    <message>
        <source>context '%1' signs in with %2, which Starforge does not support. Use a token, a client certificate or an exec credential plugin (what kubectl supports today).</source>
        <translation>上下文 '%1' 使用 %2 登录，而 Starforge 不支持这种方式。请使用令牌、客户端证书或 exec 凭据插件（即 kubectl 目前支持的方式）。</translation>
    </message>
    <message>
        <source>context '%1' gives user '%2' no token, client certificate or exec plugin; add one to the kubeconfig, or set FORGE_K8S_TOKEN after import</source>
        <translation>上下文 '%1' 没有为用户 '%2' 提供令牌、客户端证书或 exec 插件；请在 kubeconfig 中添加其中一项，或在导入后设置 FORGE_K8S_TOKEN</translation>
    </message>
    <message>
        <source>context '%1': user '%2' has a client certificate but no client key; kubectl needs both as well</source>
        <translation>上下文 '%1'：用户 '%2' 有客户端证书但没有客户端密钥；kubectl 同样需要两者</translation>
    </message>
    <message>
        <source>context '%1': user '%2' has a client key but no client certificate; kubectl needs both as well</source>
        <translation>上下文 '%1'：用户 '%2' 有客户端密钥但没有客户端证书；kubectl 同样需要两者</translation>
    </message>
    <message>
        <source>the user also has %1, which Starforge ignores</source>
        <translation>该用户还配置了 %1，Starforge 会将其忽略</translation>
    </message>
    <message>
        <source>context '%1', %2: %3</source>
        <extracomment>%2: the kubeconfig field ("cluster 'c' server"), %3: what is wrong with its value</extracomment>
        <translation>上下文 '%1'，%2：%3</translation>
    </message>
    <message>
        <source>%1 → %2</source>
        <translation>%1 → %2</translation>
    </message>
    <message>
        <source>%1 → %2 (in the keychain)</source>
        <translation>%1 → %2（存入钥匙串）</translation>
    </message>
    <message>
        <source>cluster '%1' of context '%2' has no server URL</source>
        <translation>上下文 '%2' 的集群 '%1' 没有服务器 URL</translation>
    </message>
    <message>
        <source>cluster '%1' %2</source>
        <extracomment>%2: a kubeconfig field name (server, certificate-authority-data, ...), as written in the file</extracomment>
        <translation>集群 '%1' 的 %2</translation>
    </message>
    <message>
        <source>the cluster skips TLS verification (insecure-skip-tls-verify); the window will show a warning</source>
        <translation>该集群跳过 TLS 验证（insecure-skip-tls-verify）；窗口将显示警告</translation>
    </message>
    <message>
        <source>context '%1' namespace</source>
        <translation>上下文 '%1' 的命名空间</translation>
    </message>
    <message>
        <source>user '%1' %2</source>
        <extracomment>%2: a kubeconfig field name (token, client-key-data, ...), as written in the file</extracomment>
        <translation>用户 '%1' 的 %2</translation>
    </message>
    <message>
        <source>user '%1' client certificate</source>
        <translation>用户 '%1' 的客户端证书</translation>
    </message>
    <message>
        <source>user '%1' client key</source>
        <translation>用户 '%1' 的客户端密钥</translation>
    </message>
    <message>
        <source>connecting will fail until this is fixed: %1</source>
        <translation>在修复此问题之前，连接将会失败：%1</translation>
    </message>
    <message>
        <source>signs in with the client certificate %1, valid until %2</source>
        <translation>使用客户端证书 %1 登录，有效期至 %2</translation>
    </message>
    <message>
        <source>signs in by running %1 when connecting and before its credential expires</source>
        <translation>在连接时以及凭据过期之前运行 %1 进行登录</translation>
    </message>
    <message>
        <source>the exec plugin's credential is used instead of the user's token</source>
        <translation>将使用 exec 插件的凭据，而不是该用户的令牌</translation>
    </message>
</context>
<context>
    <name>LineIndex</name>
    <message>
        <source>Cannot read the log %1: %2.</source>
        <translation>无法读取日志 %1：%2。</translation>
    </message>
    <message>
        <source>Cannot map the log %1: %2.</source>
        <translation>无法映射日志 %1：%2。</translation>
    </message>
    <message>
        <source>The log %1 changed while it was read; open it again.</source>
        <translation>日志 %1 在读取期间发生了变化；请重新打开。</translation>
    </message>
</context>
<context>
    <name>LogSearch</name>
    <message>
        <source>log search</source>
        <translation>日志搜索</translation>
    </message>
    <message>
        <source>The expression %1 is not valid at character %2: %3.</source>
        <translation>表达式 %1 在第 %2 个字符处无效：%3。</translation>
    </message>
    <message>
        <source>Cannot read the log %1: %2.</source>
        <translation>无法读取日志 %1：%2。</translation>
    </message>
    <message>
        <source>Cannot map the log %1 to search it: %2.</source>
        <translation>无法映射日志 %1 以进行搜索：%2。</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Starforge</source>
        <translation>Starforge</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>Main toolbar</source>
        <translation>主工具栏</translation>
    </message>
    <message>
        <source>&amp;New Job…</source>
        <translation>新建作业(&amp;N)…</translation>
    </message>
    <message>
        <source>Submit a training job: code folder, recipe, resources, review</source>
        <translation>提交训练作业：代码文件夹、配方、资源、审阅</translation>
    </message>
    <message>
        <source>Ctrl+N</source>
        <translation>Ctrl+N</translation>
    </message>
    <message>
        <source>&amp;Open JobSpec…</source>
        <translation>打开 JobSpec(&amp;O)…</translation>
    </message>
    <message>
        <source>Open a jobspec.json in the submission wizard</source>
        <translation>在提交向导中打开 jobspec.json</translation>
    </message>
    <message>
        <source>Ctrl+O</source>
        <translation>Ctrl+O</translation>
    </message>
    <message>
        <source>Connection &amp;Profiles…</source>
        <translation>连接配置(&amp;P)…</translation>
    </message>
    <message>
        <source>Ctrl+Shift+P</source>
        <translation>Ctrl+Shift+P</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>Ctrl+Q</source>
        <translation>Ctrl+Q</translation>
    </message>
    <message>
        <source>&amp;About Starforge</source>
        <translation>关于 Starforge(&amp;A)</translation>
    </message>
</context>
<context>
    <name>Net</name>
    <message>
        <source>%1 holds no PEM certificate. Give the cluster's CA certificate (-----BEGIN CERTIFICATE-----).</source>
        <translation>%1 中没有 PEM 证书。请提供集群的 CA 证书（-----BEGIN CERTIFICATE-----）。</translation>
    </message>
    <message>
        <source>Cannot read the CA file %1: %2.</source>
        <translation>无法读取 CA 文件 %1：%2。</translation>
    </message>
    <message>
        <source>The CA file %1</source>
        <translation>CA 文件 %1</translation>
    </message>
    <message>
        <source>The proxy%1 in front of %2 failed: %3. Check that the proxy runs and the proxy setting (FORGE_K8S_PROXY_URL or FORGE_S3_PROXY, else HTTPS_PROXY and NO_PROXY in the environment).</source>
        <translation>%2 前面的代理%1 失败：%3。请检查代理是否在运行，以及代理设置（FORGE_K8S_PROXY_URL 或 FORGE_S3_PROXY，否则为环境变量中的 HTTPS_PROXY 和 NO_PROXY）。</translation>
    </message>
    <message>
        <source>%1 refused the connection. Check the address and port, and that the server is running.</source>
        <translation>%1 拒绝了连接。请检查地址和端口，以及服务器是否在运行。</translation>
    </message>
    <message>
        <source>%1 closed the connection before answering. Check that the address is an HTTPS API endpoint.</source>
        <translation>%1 在应答前关闭了连接。请检查该地址是否为 HTTPS API 端点。</translation>
    </message>
    <message>
        <source>The host %1 was not found. Check the server address.</source>
        <translation>找不到主机 %1。请检查服务器地址。</translation>
    </message>
    <message>
        <source>%1 did not answer in time. Check the network path to it (VPN, proxy, firewall).</source>
        <translation>%1 未及时应答。请检查到它的网络路径（VPN、代理、防火墙）。</translation>
    </message>
    <message>
        <source>The request to %1 was cancelled or timed out.</source>
        <translation>对 %1 的请求已取消或超时。</translation>
    </message>
    <message>
        <source>The TLS certificate of %1 is not trusted: %2. Give the cluster's CA certificate (a CA file or CA data) in the profile.</source>
        <translation>%1 的 TLS 证书不受信任：%2。请在配置文件中提供集群的 CA 证书（CA 文件或 CA 数据）。</translation>
    </message>
    <message>
        <source>The network is unavailable (%1). Check the connection.</source>
        <translation>网络不可用（%1）。请检查网络连接。</translation>
    </message>
    <message>
        <source>The request to %1 failed: %2.</source>
        <translation>对 %1 的请求失败：%2。</translation>
    </message>
    <message>
        <source>%1 holds no PEM certificate (-----BEGIN CERTIFICATE-----).</source>
        <translation>%1 中没有 PEM 证书（-----BEGIN CERTIFICATE-----）。</translation>
    </message>
    <message>
        <source>%1 gives a client certificate but no key; set the client key too (client-key or client-key-data).</source>
        <translation>%1 提供了客户端证书但没有密钥；请同时设置客户端密钥（client-key 或 client-key-data）。</translation>
    </message>
    <message>
        <source>%1 is encrypted with a passphrase, which Starforge cannot ask for at every connection (kubectl cannot either). Store it unencrypted where only you can read it, e.g. `openssl pkey -in key.pem -out key-plain.pem &amp;&amp; chmod 600 key-plain.pem`.</source>
        <translation>%1 使用口令加密，而 Starforge 无法在每次连接时询问口令（kubectl 也不能）。请将其以未加密形式存放在只有您能读取的位置，例如 `openssl pkey -in key.pem -out key-plain.pem &amp;&amp; chmod 600 key-plain.pem`。</translation>
    </message>
    <message>
        <source>%1 holds no PEM private key (-----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY or EC PRIVATE KEY).</source>
        <translation>%1 中没有 PEM 私钥（-----BEGIN PRIVATE KEY-----、RSA PRIVATE KEY 或 EC PRIVATE KEY）。</translation>
    </message>
    <message>
        <source>%1 is a %2 key; client certificates work with RSA and EC keys.</source>
        <translation>%1 是 %2 密钥；客户端证书仅支持 RSA 和 EC 密钥。</translation>
    </message>
    <message>
        <source>The client certificate in %1 (%2) does not belong to the key in %3: they were not issued together. Take both from the same kubeconfig user.</source>
        <translation>%1 中的客户端证书（%2）与 %3 中的密钥不匹配：二者并非一同签发。请从同一个 kubeconfig 用户中获取两者。</translation>
    </message>
    <message>
        <source>The client certificate in %1 (%2) expired on %3. Get a new one from the cluster's administrator (kubeadm: `kubeadm certs renew`; kind and minikube write a fresh kubeconfig when the cluster starts).</source>
        <translation>%1 中的客户端证书（%2）已于 %3 过期。请向集群管理员获取新证书（kubeadm：`kubeadm certs renew`；kind 和 minikube 会在集群启动时写入新的 kubeconfig）。</translation>
    </message>
    <message>
        <source>The client certificate in %1 (%2) is not valid before %3; check this machine's clock.</source>
        <translation>%1 中的客户端证书（%2）在 %3 之前无效；请检查本机的时钟。</translation>
    </message>
    <message>
        <source>The key in %1 could not be converted for the TLS library.</source>
        <translation>无法为 TLS 库转换 %1 中的密钥。</translation>
    </message>
    <message>
        <source>The TLS library refused the key in %1.</source>
        <translation>TLS 库拒绝了 %1 中的密钥。</translation>
    </message>
</context>
<context>
    <name>Ownership</name>
    <message>
        <source>RayJob %1 carries the job id "%2", which is not one Starforge makes (six characters of bcdfghjklmnpqrstvwxz2456789); it is not followed.</source>
        <translation>RayJob %1 带有作业 ID "%2"，这不是 Starforge 生成的 ID（由 bcdfghjklmnpqrstvwxz2456789 组成的六个字符）；不会跟踪它。</translation>
    </message>
    <message>
        <source>RayJob %1 is not named &lt;job name&gt;-&lt;job id&gt; (%2-%3) as Starforge names its jobs; it is not followed.</source>
        <translation>RayJob %1 的名称不符合 Starforge 的作业命名方式 &lt;job name&gt;-&lt;job id&gt;（%2-%3）；不会跟踪它。</translation>
    </message>
    <message>
        <source>Job %1 is yours but archives to %2, another profile's bucket; %3 it from that profile.</source>
        <translation>作业 %1 属于您，但归档到另一个配置文件的存储桶 %2；请从该配置文件中%3它。</translation>
    </message>
    <message>
        <source>Job %1 belongs to %2; Starforge does not %3 other people's jobs.</source>
        <translation>作业 %1 属于 %2；Starforge 不会%3他人的作业。</translation>
    </message>
    <message>
        <source>The archive of job %1 records no owner (it was made before Starforge recorded owners); Starforge does not %2 it. Remove jobs/%1/ from the bucket with an S3 tool if it is yours.</source>
        <translation>作业 %1 的归档未记录所有者（它创建于 Starforge 记录所有者之前）；Starforge 不会%2它。如果它是您的，请使用 S3 工具从存储桶中删除 jobs/%1/。</translation>
    </message>
    <message>
        <source>Job %1 records no owner (it was made before Starforge recorded owners); Starforge does not %2 it. kubectl delete rayjob %3 -n %4 would.</source>
        <translation>作业 %1 未记录所有者（它创建于 Starforge 记录所有者之前）；Starforge 不会%2它。可以用 kubectl delete rayjob %3 -n %4 删除它。</translation>
    </message>
    <message>
        <source>notYours called for the viewer's own job</source>
        <translation>为查看者自己的作业调用了 notYours</translation>
    </message>
</context>
<context>
    <name>PlaygroundClient</name>
    <message>
        <source>ended</source>
        <translation>已结束</translation>
    </message>
    <message>
        <source>ended: %1</source>
        <translation>已结束：%1</translation>
    </message>
    <message>
        <source>ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>waiting: %1</source>
        <translation>等待中：%1</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>正在启动</translation>
    </message>
    <message>
        <source>create the playground pod in namespace %1</source>
        <translation>在命名空间 %1 中创建试验场 Pod</translation>
    </message>
    <message>
        <source>list the playground pods in namespace %1</source>
        <translation>列出命名空间 %1 中的试验场 Pod</translation>
    </message>
    <message>
        <source>read the playground pod %1</source>
        <translation>读取试验场 Pod %1</translation>
    </message>
    <message>
        <source>%1 is not a playground pod; Starforge stops only the playground pods it made.</source>
        <translation>%1 不是试验场 Pod；Starforge 只停止它自己创建的试验场 Pod。</translation>
    </message>
    <message>
        <source>The playground pod %1 belongs to %2; Starforge stops only your own.</source>
        <translation>试验场 Pod %1 属于 %2；Starforge 只停止您自己的 Pod。</translation>
    </message>
    <message>
        <source>nobody recorded</source>
        <translation>（未记录所有者）</translation>
    </message>
    <message>
        <source>delete the playground pod %1</source>
        <translation>删除试验场 Pod %1</translation>
    </message>
    <message>
        <source>read the events of %1</source>
        <translation>读取 %1 的事件</translation>
    </message>
</context>
<context>
    <name>PlaygroundPod</name>
    <message>
        <source>%1=%2,app.kubernetes.io/managed-by=starforge,starforge.dev/owner=%3</source>
        <translation>%1=%2,app.kubernetes.io/managed-by=starforge,starforge.dev/owner=%3</translation>
    </message>
    <message>
        <source>model: required: a checkpoint's path under %1, or a model name such as Qwen/Qwen3-0.6B.</source>
        <translation>model: 必填：%1 下的检查点路径，或模型名称，例如 Qwen/Qwen3-0.6B。</translation>
    </message>
    <message>
        <source>model: "%1" must not contain "..".</source>
        <translation>model: "%1" 不能包含 ".."。</translation>
    </message>
    <message>
        <source>model: %1 is not under the storage root %2, the only storage a playground pod mounts.</source>
        <translation>model: %1 不在存储根目录 %2 下，而这是试验场 Pod 唯一挂载的存储。</translation>
    </message>
    <message>
        <source>model: a checkpoint is served from the storage volume, but the profile has none; set FORGE_K8S_STORAGE_PVC.</source>
        <translation>model: 检查点需从存储卷提供，但配置文件中没有存储卷；请设置 FORGE_K8S_STORAGE_PVC。</translation>
    </message>
    <message>
        <source>model: "%1" is neither a path under %2 nor a model name such as Qwen/Qwen3-0.6B.</source>
        <translation>model: "%1" 既不是 %2 下的路径，也不是模型名称（例如 Qwen/Qwen3-0.6B）。</translation>
    </message>
    <message>
        <source>tokenizer: %1 must be a path under the storage root %2.</source>
        <translation>tokenizer: %1 必须是存储根目录 %2 下的路径。</translation>
    </message>
    <message>
        <source>servedName: "%1" must be 1-128 letters, digits, '.', '_', '-' or '/'.</source>
        <translation>servedName: "%1" 必须由 1-128 个字母、数字、'.'、'_'、'-' 或 '/' 组成。</translation>
    </message>
    <message>
        <source>series: "%1" is not a GPU series of the cluster (a node label value).</source>
        <translation>series: "%1" 不是该集群的 GPU 系列（节点标签值）。</translation>
    </message>
    <message>
        <source>gpus: the tensor parallel size must be between 1 and 64, not %1.</source>
        <translation>gpus: 张量并行大小必须介于 1 到 64 之间，而不是 %1。</translation>
    </message>
    <message>
        <source>ttl: must be between 1 minute and 7 days, not %1 s.</source>
        <translation>ttl: 必须介于 1 分钟到 7 天之间，而不是 %1 秒。</translation>
    </message>
    <message>
        <source>maxModelLen: must be at least 16 tokens, or 0 for the model's own, not %1.</source>
        <translation>maxModelLen: 必须至少为 16 个 token，或为 0 表示使用模型自身的值，而不是 %1。</translation>
    </message>
    <message>
        <source>job: "%1" is not a Starforge job id.</source>
        <translation>job: "%1" 不是 Starforge 作业 ID。</translation>
    </message>
    <message>
        <source>owner: unknown; set FORGE_OWNER, or sign in so the cluster names you.</source>
        <translation>owner: 未知；请设置 FORGE_OWNER，或登录以便集群识别您的身份。</translation>
    </message>
    <message>
        <source>image: FORGE_IMAGE_VLLM is empty; set the vLLM image to run.</source>
        <translation>image: FORGE_IMAGE_VLLM 为空；请设置要运行的 vLLM 镜像。</translation>
    </message>
</context>
<context>
    <name>ProfileStore</name>
    <message>
        <source>profile %1: renamed %2 to %3</source>
        <translation>配置文件 %1：已将 %2 重命名为 %3</translation>
    </message>
    <message>
        <source>profile %1: dropped unknown setting %2</source>
        <translation>配置文件 %1：已丢弃未知设置项 %2</translation>
    </message>
    <message>
        <source>profile %1: %2 moves from the settings file to the keychain</source>
        <translation>配置文件 %1：%2 将从设置文件移至钥匙串</translation>
    </message>
    <message>
        <source>profile %1: dropped invalid value (%2)</source>
        <translation>配置文件 %1：已丢弃无效值（%2）</translation>
    </message>
    <message>
        <source>cannot read the profiles file %1: %2</source>
        <translation>无法读取配置文件存储文件 %1：%2</translation>
    </message>
    <message>
        <source>the profiles file %1 is not a valid INI file; fix or move it away</source>
        <translation>配置文件存储文件 %1 不是有效的 INI 文件；请修复它或将其移走</translation>
    </message>
    <message>
        <source>the profiles file %1 has an unreadable settings/version '%2'</source>
        <translation>配置文件存储文件 %1 中的 settings/version '%2' 无法读取</translation>
    </message>
    <message>
        <source>the profiles file %1 was written by a newer Starforge (settings version %2; this one reads up to %3). Update Starforge; the file was left untouched.</source>
        <translation>配置文件存储文件 %1 由较新版本的 Starforge 写入（设置版本 %2；当前版本最高只能读取 %3）。请更新 Starforge；该文件未被改动。</translation>
    </message>
    <message>
        <source>profile '%1' has an invalid name and was skipped</source>
        <translation>配置文件 '%1' 的名称无效，已跳过</translation>
    </message>
    <message>
        <source>profile %1: ignored invalid value (%2)</source>
        <translation>配置文件 %1：已忽略无效值（%2）</translation>
    </message>
    <message>
        <source>the active profile '%1' does not exist; none is active</source>
        <translation>活动配置文件 '%1' 不存在；当前没有活动配置文件</translation>
    </message>
    <message>
        <source>cannot create the folder %1 for the profiles file</source>
        <translation>无法为配置文件存储文件创建文件夹 %1</translation>
    </message>
    <message>
        <source>cannot write in the folder of the profiles file %1: %2</source>
        <translation>无法在配置文件存储文件 %1 所在的文件夹中写入：%2</translation>
    </message>
    <message>
        <source>cannot write the profiles file %1</source>
        <translation>无法写入配置文件存储文件 %1</translation>
    </message>
    <message>
        <source>cannot replace the profiles file %1: %2</source>
        <translation>无法替换配置文件存储文件 %1：%2</translation>
    </message>
    <message>
        <source>'%1' has surrounding spaces; a profile name has none</source>
        <translation>'%1' 前后有空格；配置文件名称不能带有前后空格</translation>
    </message>
    <message>
        <source>a profile named '%1' already exists; choose another name</source>
        <translation>已存在名为 '%1' 的配置文件；请换一个名称</translation>
    </message>
    <message>
        <source>there is no profile named '%1'</source>
        <translation>没有名为 '%1' 的配置文件</translation>
    </message>
    <message>
        <source>%1 is a secret and is kept in the keychain, not in the profile file</source>
        <translation>%1 是机密项，保存在钥匙串中，而不是配置文件存储文件中</translation>
    </message>
</context>
<context>
    <name>ProfilesDialog</name>
    <message>
        <source>Connection Profiles</source>
        <translation>连接配置</translation>
    </message>
    <message>
        <source>&lt;b&gt;Profiles&lt;/b&gt;</source>
        <translation>&lt;b&gt;配置文件&lt;/b&gt;</translation>
    </message>
    <message>
        <source>&amp;Add…</source>
        <translation>添加(&amp;A)…</translation>
    </message>
    <message>
        <source>Create an empty profile</source>
        <translation>创建一个空配置文件</translation>
    </message>
    <message>
        <source>&amp;Import kubeconfig…</source>
        <translation>导入 kubeconfig(&amp;I)…</translation>
    </message>
    <message>
        <source>Create or update a profile from a kubeconfig context</source>
        <translation>从 kubeconfig 上下文创建或更新配置文件</translation>
    </message>
    <message>
        <source>D&amp;uplicate…</source>
        <translation>复制(&amp;U)…</translation>
    </message>
    <message>
        <source>Re&amp;name…</source>
        <translation>重命名(&amp;N)…</translation>
    </message>
    <message>
        <source>Make a&amp;ctive</source>
        <translation>设为活动(&amp;C)</translation>
    </message>
    <message>
        <source>Connect the main window with this profile</source>
        <translation>让主窗口使用此配置文件连接</translation>
    </message>
    <message>
        <source>&amp;Delete…</source>
        <translation>删除(&amp;D)…</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>&amp;Reset to default</source>
        <translation>重置为默认值(&amp;R)</translation>
    </message>
    <message>
        <source>Back to the default; for a secret: remove it from the keychain (on apply)</source>
        <translation>恢复为默认值；对于机密项：从钥匙串中删除（应用时）</translation>
    </message>
    <message>
        <source>&amp;Test connection…</source>
        <translation>测试连接(&amp;T)…</translation>
    </message>
    <message>
        <source>Check the saved settings: the API server, sign-in, KubeRay, what the token may do, and the bucket</source>
        <translation>检查已保存的设置：API 服务器、登录、KubeRay、令牌的权限以及存储桶</translation>
    </message>
    <message>
        <source>Re&amp;vert</source>
        <translation>还原(&amp;V)</translation>
    </message>
    <message>
        <source>A&amp;pply</source>
        <translation>应用(&amp;P)</translation>
    </message>
</context>
<context>
    <name>Progress</name>
    <message>
        <source>Ran all epochs</source>
        <translation>已完成所有轮次</translation>
    </message>
    <message>
        <source>Exited with code %1</source>
        <translation>已退出，退出码 %1</translation>
    </message>
    <message>
        <source> (global step %1)</source>
        <translation> (全局第 %1 步)</translation>
    </message>
    <message>
        <source>last checkpoint step %1</source>
        <translation>最近的检查点为第 %1 步</translation>
    </message>
    <message>
        <source>saving step %1</source>
        <translation>正在保存第 %1 步</translation>
    </message>
</context>
<context>
    <name>ProgressFollower</name>
    <message>
        <source>find the submitter pod of job %1</source>
        <translation>查找作业 %1 的提交器 Pod</translation>
    </message>
</context>
<context>
    <name>Proxy</name>
    <message>
        <source>%1 (%2) is not a proxy URL. Write e.g. http://proxy.example.com:3128 or socks5://127.0.0.1:1080.</source>
        <translation>%1（%2）不是代理 URL。请写成例如 http://proxy.example.com:3128 或 socks5://127.0.0.1:1080。</translation>
    </message>
    <message>
        <source>%1 (%2) is a proxy reached over TLS (https://), which this app cannot speak to. Give the proxy's plain http:// address instead: requests to https:// servers stay encrypted end to end, the proxy only relays them after CONNECT. A socks5:// proxy works too.</source>
        <translation>%1（%2）是通过 TLS（https://）访问的代理，本应用无法与之通信。请改为提供代理的明文 http:// 地址：发往 https:// 服务器的请求仍然是端到端加密的，代理只在 CONNECT 之后转发它们。也可以使用 socks5:// 代理。</translation>
    </message>
    <message>
        <source>%1 (%2) uses the scheme '%3'; a proxy is http://, socks5:// or socks5h://.</source>
        <translation>%1（%2）使用的协议是 '%3'；代理应为 http://、socks5:// 或 socks5h://。</translation>
    </message>
    <message>
        <source>The proxy URL</source>
        <translation>代理 URL</translation>
    </message>
    <message>
        <source>%1 in the environment</source>
        <translation>环境变量中的 %1</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>Cannot read the job history from the bucket: %1</source>
        <translation>无法从存储桶读取作业历史：%1</translation>
    </message>
    <message>
        <source>Job %1 is neither on the cluster nor in the job history.</source>
        <translation>作业 %1 既不在集群上，也不在作业历史中。</translation>
    </message>
    <message>
        <source>The archive of job %1 is damaged: %2</source>
        <translation>作业 %1 的归档已损坏：%2</translation>
    </message>
    <message>
        <source>%1 is not in the archive.</source>
        <translation>%1 不在归档中。</translation>
    </message>
    <message>
        <source>Could not remove the leftover %1.</source>
        <translation>无法删除残留的 %1。</translation>
    </message>
</context>
<context>
    <name>RayJobBuilder</name>
    <message>
        <source>The job id "%1" must be six lowercase letters or digits.</source>
        <translation>作业 ID "%1" 必须是六个小写字母或数字。</translation>
    </message>
    <message>
        <source>The Capsule's SHA-256 "%1" is not 64 hex digits.</source>
        <translation>Capsule 的 SHA-256 "%1" 不是 64 位十六进制数。</translation>
    </message>
    <message>
        <source>The SHA-256 of the Capsule's manifest.json "%1" is not 64 hex digits.</source>
        <translation>Capsule 的 manifest.json 的 SHA-256 "%1" 不是 64 位十六进制数。</translation>
    </message>
    <message>
        <source>The Capsule URL "%1" is not an http(s) URL.</source>
        <translation>Capsule URL "%1" 不是 http(s) URL。</translation>
    </message>
    <message>
        <source>The job has no owner: set FORGE_OWNER in the profile, or connect so the cluster can say who you are.</source>
        <translation>作业没有所有者：请在配置文件中设置 FORGE_OWNER，或进行连接以便集群确认您的身份。</translation>
    </message>
</context>
<context>
    <name>S3</name>
    <message>
        <source>bucket %1</source>
        <translation>存储桶 %1</translation>
    </message>
    <message>
        <source>object %1 in bucket %2</source>
        <translation>存储桶 %2 中的对象 %1</translation>
    </message>
    <message>
        <source> (the server says: %1)</source>
        <translation> (服务器返回：%1)</translation>
    </message>
    <message>
        <source>%1 does not know the access key %2. Check FORGE_S3_ACCESS_KEY: it must be an access key id issued by this S3 server.</source>
        <translation>%1 不认识访问密钥 %2。请检查 FORGE_S3_ACCESS_KEY：它必须是此 S3 服务器签发的访问密钥 ID。</translation>
    </message>
    <message>
        <source>%1 rejected the request signature: the secret key does not belong to access key %2. Check FORGE_S3_SECRET_KEY (and FORGE_S3_REGION if the server is region-bound).</source>
        <translation>%1 拒绝了请求签名：私密密钥与访问密钥 %2 不匹配。请检查 FORGE_S3_SECRET_KEY（如果服务器绑定了区域，还需检查 FORGE_S3_REGION）。</translation>
    </message>
    <message>
        <source>%1 rejected the request because this machine's clock differs from the server's by more than 15 minutes. Fix the machine's clock (enable time synchronisation, NTP) and try again.%2</source>
        <translation>%1 拒绝了请求，因为本机时钟与服务器相差超过 15 分钟。请校正本机时钟（启用时间同步 NTP）后重试。%2</translation>
    </message>
    <message>
        <source>The bucket %1 does not exist on %2. Create it, or set FORGE_S3_BUCKET to an existing bucket.</source>
        <translation>存储桶 %1 在 %2 上不存在。请创建它，或将 FORGE_S3_BUCKET 设为已有的存储桶。</translation>
    </message>
    <message>
        <source>The object %1 does not exist in bucket %2.</source>
        <translation>存储桶 %2 中不存在对象 %1。</translation>
    </message>
    <message>
        <source>The multipart upload of %1 no longer exists on %2 (it was completed or aborted). Start the upload again.</source>
        <translation>%1 的分段上传在 %2 上已不存在（已完成或已中止）。请重新开始上传。</translation>
    </message>
    <message>
        <source>%1 denied access to the %2 for access key %3. Give this key permission on the bucket, or check FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY.%4</source>
        <translation>%1 拒绝访问密钥 %3 访问%2。请为此密钥授予该存储桶的权限，或检查 FORGE_S3_ACCESS_KEY 和 FORGE_S3_SECRET_KEY。%4</translation>
    </message>
    <message>
        <source>%1 received different bytes than were sent for the %2 (%3): the payload was corrupted in transit. Try again; if it repeats, check proxies or network equipment between this machine and the server.</source>
        <translation>%1 收到的%2（%3）字节与发送的不一致：数据在传输中损坏。请重试；如果问题反复出现，请检查本机与服务器之间的代理或网络设备。</translation>
    </message>
    <message>
        <source>%1 refused to assemble the %2: every part but the last must be at least 5 MiB. Raise the part size.</source>
        <translation>%1 拒绝组装%2：除最后一个分段外，每个分段都必须至少为 5 MiB。请增大分段大小。</translation>
    </message>
    <message>
        <source>%1 refused to assemble the %2: a part is missing or its ETag does not match what was uploaded (%3). Upload the object again.</source>
        <translation>%1 拒绝组装%2：缺少某个分段，或其 ETag 与上传的不一致（%3）。请重新上传该对象。</translation>
    </message>
    <message>
        <source>%1 refused the %2: it is larger than the server allows.%3</source>
        <translation>%1 拒绝了%2：它超过了服务器允许的大小。%3</translation>
    </message>
    <message>
        <source>The bucket %1 already exists on %2.</source>
        <translation>存储桶 %1 在 %2 上已存在。</translation>
    </message>
    <message>
        <source>%1 asks to slow down (HTTP %2). Try again in a moment.</source>
        <translation>%1 要求降低请求速率（HTTP %2）。请稍后重试。</translation>
    </message>
    <message>
        <source>%1 failed with HTTP %2%3 for the %4. Try again later; if it repeats, the server's administrator has to look at it.%5</source>
        <translation>%1 处理%4时失败，HTTP %2%3。请稍后重试；如果问题反复出现，需要服务器管理员排查。%5</translation>
    </message>
    <message>
        <source>%1 says the %2 lives at another address. Check FORGE_S3_ENDPOINT, FORGE_S3_REGION and FORGE_S3_PATH_STYLE.%3</source>
        <translation>%1 表示%2位于另一个地址。请检查 FORGE_S3_ENDPOINT、FORGE_S3_REGION 和 FORGE_S3_PATH_STYLE。%3</translation>
    </message>
    <message>
        <source>%1 refused the request for the %2 with HTTP %3%4.%5</source>
        <translation>%1 拒绝了对%2的请求，HTTP %3%4。%5</translation>
    </message>
    <message>
        <source>The S3 server sent a %1 answer that cannot be read (%2). Check that the endpoint is an S3 API address.</source>
        <translation>S3 服务器发送了无法读取的 %1 应答（%2）。请检查端点是否为 S3 API 地址。</translation>
    </message>
    <message>
        <source>nested or repeated too deeply</source>
        <translation>嵌套或重复层级过深</translation>
    </message>
    <message>
        <source>more than one root element</source>
        <translation>存在多个根元素</translation>
    </message>
    <message>
        <source>a DTD is not allowed</source>
        <translation>不允许使用 DTD</translation>
    </message>
    <message>
        <source>%1 at line %2</source>
        <translation>%1，位于第 %2 行</translation>
    </message>
    <message>
        <source>no XML element</source>
        <translation>没有 XML 元素</translation>
    </message>
    <message>
        <source>&lt;%1&gt; instead of &lt;%2&gt;</source>
        <translation>&lt;%1&gt; 而不是 &lt;%2&gt;</translation>
    </message>
    <message>
        <source>an entry without a key</source>
        <translation>一个没有键的条目</translation>
    </message>
    <message>
        <source>the size of %1 is not a number</source>
        <translation>%1 的大小不是数字</translation>
    </message>
    <message>
        <source>a truncated page without NextContinuationToken</source>
        <translation>一个截断的页面缺少 NextContinuationToken</translation>
    </message>
    <message>
        <source>a part without a valid number or size</source>
        <translation>一个分段缺少有效的编号或大小</translation>
    </message>
    <message>
        <source>a truncated page without NextPartNumberMarker</source>
        <translation>一个截断的页面缺少 NextPartNumberMarker</translation>
    </message>
    <message>
        <source>an upload without an UploadId</source>
        <translation>一个上传缺少 UploadId</translation>
    </message>
    <message>
        <source>a truncated page without NextKeyMarker</source>
        <translation>一个截断的页面缺少 NextKeyMarker</translation>
    </message>
    <message>
        <source>no UploadId</source>
        <translation>没有 UploadId</translation>
    </message>
    <message>
        <source>an error without a code</source>
        <translation>一个错误缺少错误码</translation>
    </message>
    <message>
        <source>FORGE_S3_ENDPOINT is not set. Give the URL of the S3-compatible object store, e.g. https://s3.example.com.</source>
        <translation>未设置 FORGE_S3_ENDPOINT。请提供兼容 S3 的对象存储的 URL，例如 https://s3.example.com。</translation>
    </message>
    <message>
        <source>FORGE_S3_ENDPOINT (%1) is not an http(s) URL with a host.</source>
        <translation>FORGE_S3_ENDPOINT（%1）不是带主机名的 http(s) URL。</translation>
    </message>
    <message>
        <source>FORGE_S3_BUCKET is not set. Give the bucket that holds Capsules and logs.</source>
        <translation>未设置 FORGE_S3_BUCKET。请提供存放 Capsule 和日志的存储桶。</translation>
    </message>
    <message>
        <source>FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY must both be set (in the keychain or the environment) to use %1.</source>
        <translation>要使用 %1，必须同时设置 FORGE_S3_ACCESS_KEY 和 FORGE_S3_SECRET_KEY（在钥匙串或环境变量中）。</translation>
    </message>
    <message>
        <source>FORGE_S3_CA_FILE: %1</source>
        <translation>FORGE_S3_CA_FILE: %1</translation>
    </message>
    <message>
        <source>The S3 request has not finished yet.</source>
        <translation>S3 请求尚未完成。</translation>
    </message>
    <message>
        <source>The S3 request was cancelled.</source>
        <translation>S3 请求已取消。</translation>
    </message>
    <message>
        <source>The S3 client was destroyed before the request went out.</source>
        <translation>S3 客户端在请求发出前已被销毁。</translation>
    </message>
    <message>
        <source>Writing %1 to disk failed: %2. Free some space and try again.</source>
        <translation>将 %1 写入磁盘失败：%2。请释放一些空间后重试。</translation>
    </message>
    <message>
        <source>a request to bucket %1</source>
        <translation>对存储桶 %1 的请求</translation>
    </message>
    <message>
        <source>The S3 server's answer for %1 is larger than %2 MiB, the most Starforge holds in memory; it was not read. A large object is downloaded to a file instead.</source>
        <translation>S3 服务器对 %1 的应答超过 %2 MiB，这是 Starforge 在内存中保存的上限；未读取该应答。大对象会改为下载到文件。</translation>
    </message>
    <message>
        <source>Cannot write %1: %2.</source>
        <translation>无法写入 %1：%2。</translation>
    </message>
    <message>
        <source>The S3 server's listing of %1 does not end: it said there is more but returned %2 after %3 pages. The listing was stopped; the server or a proxy in front of it is at fault.</source>
        <translation>S3 服务器对 %1 的列表没有结束：它表示还有更多内容，但在 %3 页后给出了%2。列表已停止；问题出在服务器或其前面的代理。</translation>
    </message>
    <message>
        <source>the bucket</source>
        <translation>存储桶</translation>
    </message>
    <message>
        <source>no continuation token</source>
        <translation>空的续传令牌</translation>
    </message>
    <message>
        <source>a continuation token it had given before</source>
        <translation>一个之前已给出过的续传令牌</translation>
    </message>
    <message>
        <source>A presigned URL must expire between 1 second and 7 days from now; %1 seconds was asked.</source>
        <translation>预签名 URL 的有效期必须介于 1 秒到 7 天之间；请求的是 %1 秒。</translation>
    </message>
    <message>
        <source>A presigned URL needs an object key.</source>
        <translation>预签名 URL 需要对象键。</translation>
    </message>
    <message>
        <source>The S3 server's part listing does not advance.</source>
        <translation>S3 服务器的分段列表没有向前推进。</translation>
    </message>
    <message>
        <source>The S3 server's listing of unfinished uploads under %1 does not end: it said there is more but returned markers it had given before after %2 pages. The listing was stopped; the server or a proxy in front of it is at fault.</source>
        <translation>S3 服务器对 %1 下未完成上传的列表没有结束：它表示还有更多内容，但在 %2 页后返回了之前已给出过的标记。列表已停止；问题出在服务器或其前面的代理。</translation>
    </message>
</context>
<context>
    <name>SandboxApp</name>
    <message>
        <source>A local Kubernetes + KubeRay cluster for Starforge and its tests.</source>
        <translation>用于 Starforge 及其测试的本地 Kubernetes + KubeRay 集群。</translation>
    </message>
    <message>
        <source>Loopback address and port (port 0: any free one).</source>
        <translation>环回地址和端口（端口 0：任意空闲端口）。</translation>
    </message>
    <message>
        <source>Where to write the connection details once ready (JSON).</source>
        <translation>就绪后写入连接信息的位置（JSON）。</translation>
    </message>
    <message>
        <source>Nodes: SERIES:NODESxGPUS,... (e.g. h200:4x8,cpu:2x0) or scale:N.</source>
        <translation>节点：SERIES:NODESxGPUS,...（例如 h200:4x8,cpu:2x0）或 scale:N。</translation>
    </message>
    <message>
        <source>Seed for the sandbox's random choices.</source>
        <translation>沙盒随机选择所用的种子。</translation>
    </message>
    <message>
        <source>RBAC file adding users with fewer rights.</source>
        <translation>用于添加权限较少的用户的 RBAC 文件。</translation>
    </message>
    <message>
        <source>Faults from the start: rate429=F,rate500=F,delayMs=N,dropWatchesAfterMs=N,dropLogsAfterMs=N,s3PartFailureRate=F,next500Creates=N,holdS3Uploads=0|1 (docs/sandbox.md).</source>
        <translation>从启动起就注入的故障：rate429=F,rate500=F,delayMs=N,dropWatchesAfterMs=N,dropLogsAfterMs=N,s3PartFailureRate=F,next500Creates=N,holdS3Uploads=0|1（docs/sandbox.md）。</translation>
    </message>
    <message>
        <source>The namespace for Starforge's objects.</source>
        <translation>Starforge 对象所在的命名空间。</translation>
    </message>
    <message>
        <source>Images present on the nodes, comma-separated (default: the FORGE_IMAGE_* defaults); others fail to pull.</source>
        <translation>节点上已有的镜像，以逗号分隔（默认：FORGE_IMAGE_* 的默认值）；其他镜像会拉取失败。</translation>
    </message>
    <message>
        <source>Image prefix of the private registry: its images need an imagePullSecrets Secret (kubernetes.io/dockerconfigjson) with credentials for its host, else the pull fails with 401 Unauthorized (default registry.sandbox.internal/private/; empty: none).</source>
        <translation>私有镜像仓库的镜像前缀：其镜像需要一个 imagePullSecrets Secret（kubernetes.io/dockerconfigjson），其中含有该仓库主机的凭据，否则拉取会以 401 Unauthorized 失败（默认 registry.sandbox.internal/private/；留空：无）。</translation>
    </message>
    <message>
        <source>The KubeRay release to be, 1.4 to 1.7: its RayJob CRD is served and admitted against (1.5 and older prune preRunningDeadlineSeconds).</source>
        <translation>要模拟的 KubeRay 版本，1.4 到 1.7：按该版本的 RayJob CRD 提供服务并进行准入校验（1.5 及更早版本会剪除 preRunningDeadlineSeconds）。</translation>
    </message>
    <message>
        <source>Lifetime of the tokens starforge-sandbox-credential (the kubeconfig's starforge-sandbox-exec context) mints (default 3600; 0: they never expire).</source>
        <translation>starforge-sandbox-credential（kubeconfig 中的 starforge-sandbox-exec 上下文）签发的令牌的有效期（默认 3600；0：永不过期）。</translation>
    </message>
    <message>
        <source>Run the operator with DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true: shutdownAfterJobFinishes deletes the RayJob itself at ttlSecondsAfterFinished.</source>
        <translation>以 DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true 运行 operator：shutdownAfterJobFinishes 会在 ttlSecondsAfterFinished 到期时删除 RayJob 本身。</translation>
    </message>
    <message>
        <source>The operator's feature gates: RayJobDeletionPolicy=true|false (spec.deletionStrategy; default on from --kuberay-version 1.6).</source>
        <translation>operator 的特性门控：RayJobDeletionPolicy=true|false（spec.deletionStrategy；从 --kuberay-version 1.6 起默认开启）。</translation>
    </message>
    <message>
        <source>The operator's environment, comma-separated: ENABLE_INIT_CONTAINER_INJECTION, ENABLE_PROBES_INJECTION (on unless false) and DELETE_RAYJOB_CR_AFTER_JOB_FINISHES (off unless true), e.g. ENABLE_PROBES_INJECTION=false.</source>
        <translation>operator 的环境变量，以逗号分隔：ENABLE_INIT_CONTAINER_INJECTION、ENABLE_PROBES_INJECTION（除非设为 false，否则开启）和 DELETE_RAYJOB_CR_AFTER_JOB_FINISHES（除非设为 true，否则关闭），例如 ENABLE_PROBES_INJECTION=false。</translation>
    </message>
    <message>
        <source>Tokens per second the vLLM stand-in generates in playground pods (default 50).</source>
        <translation>vLLM 替身在试验场 Pod 中每秒生成的 token 数（默认 50）。</translation>
    </message>
    <message>
        <source>--listen takes HOST:PORT with a loopback address, e.g. 127.0.0.1:0, not '%1'</source>
        <translation>--listen 需要带环回地址的 HOST:PORT，例如 127.0.0.1:0，而不是 '%1'</translation>
    </message>
    <message>
        <source>--seed takes a non-negative integer</source>
        <translation>--seed 需要一个非负整数</translation>
    </message>
    <message>
        <source>--kuberay-version: %1</source>
        <translation>--kuberay-version: %1</translation>
    </message>
    <message>
        <source>--token-ttl takes a number of seconds (0: tokens never expire), not '%1'</source>
        <translation>--token-ttl 需要一个秒数（0：令牌永不过期），而不是 '%1'</translation>
    </message>
    <message>
        <source>--token-rate takes a positive number of tokens per second, not '%1'</source>
        <translation>--token-rate 需要一个正数（每秒 token 数），而不是 '%1'</translation>
    </message>
    <message>
        <source>--feature-gates takes RayJobDeletionPolicy=true or RayJobDeletionPolicy=false, not '%1'</source>
        <translation>--feature-gates 只接受 RayJobDeletionPolicy=true 或 RayJobDeletionPolicy=false，而不是 '%1'</translation>
    </message>
    <message>
        <source>--operator-env takes NAME=VALUE pairs, not '%1'</source>
        <translation>--operator-env 需要 NAME=VALUE 形式的键值对，而不是 '%1'</translation>
    </message>
    <message>
        <source>--operator-env knows ENABLE_INIT_CONTAINER_INJECTION, ENABLE_PROBES_INJECTION and DELETE_RAYJOB_CR_AFTER_JOB_FINISHES, not '%1'</source>
        <translation>--operator-env 只识别 ENABLE_INIT_CONTAINER_INJECTION、ENABLE_PROBES_INJECTION 和 DELETE_RAYJOB_CR_AFTER_JOB_FINISHES，而不是 '%1'</translation>
    </message>
    <message>
        <source>starforge-sandbox %1 serving %2; connection file %3</source>
        <translation>starforge-sandbox %1 正在 %2 上提供服务；连接文件：%3</translation>
    </message>
    <message>
        <source>Seconds each training step of the NeMo-RL stand-in takes (default 0.2), so a job with hundreds of steps can run unchanged in a test.</source>
        <translation>NeMo-RL 替身每个训练步骤所用的秒数（默认 0.2），使包含数百个步骤的作业可在测试中原样运行。</translation>
    </message>
    <message>
        <source>--nemo-rl-step-seconds takes a number of seconds, 0 or more, not '%1'</source>
        <translation>--nemo-rl-step-seconds 需要 0 或更大的秒数，而不是 '%1'</translation>
    </message>
</context>
<context>
    <name>Selfsubjectreview</name>
    <message>
        <source>the SelfSubjectReview has no status.userInfo.username</source>
        <translation>SelfSubjectReview 中没有 status.userInfo.username</translation>
    </message>
</context>
<context>
    <name>SessionSource</name>
    <message>
        <source>profile %1</source>
        <translation>配置文件 %1</translation>
    </message>
    <message>
        <source>the sandbox's connection file %1</source>
        <translation>沙盒的连接文件 %1</translation>
    </message>
    <message>
        <source>there is no connection file '%1': start the sandbox first (starforge-sandbox --connection-file FILE writes it once it is ready, and removes it when it stops)</source>
        <translation>连接文件 '%1' 不存在：请先启动沙盒（starforge-sandbox --connection-file FILE 会在沙盒就绪后写入该文件，并在沙盒停止时删除它）</translation>
    </message>
    <message>
        <source>The starforge-sandbox that wrote %1 has stopped: start it again.</source>
        <translation>写入 %1 的 starforge-sandbox 已停止：请重新启动它。</translation>
    </message>
    <message>
        <source>The starforge-sandbox that wrote %1 (pid %2) is not running any more: start it again.</source>
        <translation>写入 %1 的 starforge-sandbox（pid %2）已不再运行：请重新启动它。</translation>
    </message>
</context>
<context>
    <name>SettingsSchema</name>
    <message>
        <source>Cluster</source>
        <translation>集群</translation>
    </message>
    <message>
        <source>Sign-in</source>
        <translation>登录</translation>
    </message>
    <message>
        <source>Network</source>
        <translation>网络</translation>
    </message>
    <message>
        <source>GPUs and pods</source>
        <translation>GPU 与 Pod</translation>
    </message>
    <message>
        <source>Images</source>
        <translation>镜像</translation>
    </message>
    <message>
        <source>Storage</source>
        <translation>存储</translation>
    </message>
    <message>
        <source>Object storage (S3)</source>
        <translation>对象存储 (S3)</translation>
    </message>
    <message>
        <source>KubeRay</source>
        <translation>KubeRay</translation>
    </message>
    <message>
        <source>API server</source>
        <translation>API 服务器</translation>
    </message>
    <message>
        <source>URL of the Kubernetes API server, e.g. https://api.example.com:6443. Required to connect. Plain http:// is accepted only for this machine (kubectl proxy on 127.0.0.1), since the token would otherwise cross the network unencrypted.</source>
        <translation>Kubernetes API 服务器的 URL，例如 https://api.example.com:6443。连接时必填。仅当连接本机时（127.0.0.1 上的 kubectl proxy）才接受明文 http://，否则令牌会以未加密方式在网络上传输。</translation>
    </message>
    <message>
        <source>Namespace</source>
        <translation>命名空间</translation>
    </message>
    <message>
        <source>Namespace where RayJobs, their pods and playground pods are created.</source>
        <translation>创建 RayJob、其 Pod 以及试验场 Pod 的命名空间。</translation>
    </message>
    <message>
        <source>Job owner</source>
        <translation>作业所有者</translation>
    </message>
    <message>
        <source>Whose the jobs submitted with this profile are, recorded on each RayJob (starforge.dev/owner). The app archives, stops and deletes only its owner's jobs and shows everyone else's read-only. Empty: the user name the cluster knows the credentials by (a SelfSubjectReview), the same on every workstation.</source>
        <translation>使用此配置文件提交的作业归谁所有，记录在每个 RayJob 上（starforge.dev/owner）。应用只会归档、停止和删除其所有者的作业，其他人的作业以只读方式显示。留空：使用集群识别这些凭据时所用的用户名（通过 SelfSubjectReview 获得），在每台工作站上都相同。</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>后端</translation>
    </message>
    <message>
        <source>Which backend runs jobs. Only kuberay (one ephemeral RayCluster per job, as a RayJob) exists.</source>
        <translation>由哪个后端运行作业。目前只有 kuberay（每个作业一个临时 RayCluster，以 RayJob 形式运行）。</translation>
    </message>
    <message>
        <source>Token</source>
        <translation>令牌</translation>
    </message>
    <message>
        <source>Bearer token (e.g. a ServiceAccount token) with RayJob and Pod permissions in the namespace. Kept only in the OS keychain.</source>
        <translation>在该命名空间中拥有 RayJob 和 Pod 权限的 bearer 令牌（例如 ServiceAccount 令牌）。仅保存在操作系统钥匙串中。</translation>
    </message>
    <message>
        <source>Token file</source>
        <translation>令牌文件</translation>
    </message>
    <message>
        <source>A file to read the bearer token from at every connect, as kubeconfig's tokenFile. Used when FORGE_K8S_TOKEN is not set.</source>
        <translation>每次连接时从中读取 bearer 令牌的文件，相当于 kubeconfig 的 tokenFile。在未设置 FORGE_K8S_TOKEN 时使用。</translation>
    </message>
    <message>
        <source>Client certificate file</source>
        <translation>客户端证书文件</translation>
    </message>
    <message>
        <source>PEM file of the client certificate presented in the TLS handshake (kubeconfig's client-certificate; kind, minikube and kubeadm's admin.conf sign in this way). Needs a client key.</source>
        <translation>在 TLS 握手中出示的客户端证书的 PEM 文件（kubeconfig 的 client-certificate；kind、minikube 和 kubeadm 的 admin.conf 都以这种方式登录）。需要配合客户端密钥使用。</translation>
    </message>
    <message>
        <source>Client certificate (inline)</source>
        <translation>客户端证书（内联）</translation>
    </message>
    <message>
        <source>The same certificate as base64 of the PEM text (client-certificate-data). Takes precedence over FORGE_K8S_CLIENT_CERT_FILE.</source>
        <translation>同一证书的 PEM 文本的 base64 编码（client-certificate-data）。优先于 FORGE_K8S_CLIENT_CERT_FILE。</translation>
    </message>
    <message>
        <source>Client key file</source>
        <translation>客户端密钥文件</translation>
    </message>
    <message>
        <source>PEM file of the client certificate's private key, RSA or EC, unencrypted (client-key). The path is kept, never the key.</source>
        <translation>客户端证书私钥的 PEM 文件，RSA 或 EC 格式，未加密（client-key）。只保存路径，从不保存密钥本身。</translation>
    </message>
    <message>
        <source>Client key (inline)</source>
        <translation>客户端密钥（内联）</translation>
    </message>
    <message>
        <source>The client key as base64 of the PEM text (client-key-data). Kept only in the OS keychain; takes precedence over FORGE_K8S_CLIENT_KEY_FILE.</source>
        <translation>客户端密钥的 PEM 文本的 base64 编码（client-key-data）。仅保存在操作系统钥匙串中；优先于 FORGE_K8S_CLIENT_KEY_FILE。</translation>
    </message>
    <message>
        <source>Credential plugin</source>
        <translation>凭据插件</translation>
    </message>
    <message>
        <source>An exec credential plugin, as the kubeconfig's user.exec in JSON: apiVersion, command, args, env, interactiveMode, provideClusterInfo, installHint (aws eks get-token, gke-gcloud-auth-plugin, kubelogin). Run as kubectl runs it; its token or certificate stays in memory. Takes precedence over tokens.</source>
        <translation>exec 凭据插件，格式同 kubeconfig 的 user.exec（JSON）：apiVersion、command、args、env、interactiveMode、provideClusterInfo、installHint（aws eks get-token、gke-gcloud-auth-plugin、kubelogin）。按 kubectl 的方式运行；其令牌或证书只保留在内存中。优先于令牌。</translation>
    </message>
    <message>
        <source>CA certificates file</source>
        <translation>CA 证书文件</translation>
    </message>
    <message>
        <source>PEM file with the CA certificates that sign the API server's certificate. Without it (and without FORGE_K8S_CA_DATA) the system CA store is used.</source>
        <translation>包含为 API 服务器证书签名的 CA 证书的 PEM 文件。如果没有它（且未设置 FORGE_K8S_CA_DATA），则使用系统 CA 存储。</translation>
    </message>
    <message>
        <source>CA certificates (inline)</source>
        <translation>CA 证书（内联）</translation>
    </message>
    <message>
        <source>The same CA bundle as base64 of the PEM text (kubeconfig's certificate-authority-data). Takes precedence over FORGE_K8S_CA_FILE.</source>
        <translation>同一 CA 证书包的 PEM 文本的 base64 编码（kubeconfig 的 certificate-authority-data）。优先于 FORGE_K8S_CA_FILE。</translation>
    </message>
    <message>
        <source>TLS server name</source>
        <translation>TLS 服务器名称</translation>
    </message>
    <message>
        <source>Server name to verify the API server's certificate against and send in SNI, when it differs from the URL's host (kubeconfig's tls-server-name).</source>
        <translation>用于校验 API 服务器证书并在 SNI 中发送的服务器名称，在它与 URL 中的主机不同时使用（kubeconfig 的 tls-server-name）。</translation>
    </message>
    <message>
        <source>Proxy</source>
        <translation>代理</translation>
    </message>
    <message>
        <source>Proxy for the API server: http:// or socks5:// (kubeconfig's proxy-url); socks5 proxies resolve host names, as with kubectl. Empty: HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the environment, as kubectl reads them.</source>
        <translation>访问 API 服务器所用的代理：http:// 或 socks5://（kubeconfig 的 proxy-url）；与 kubectl 一样，socks5 代理会解析主机名。留空：与 kubectl 一样，使用环境变量中的 HTTPS_PROXY、HTTP_PROXY 和 NO_PROXY。</translation>
    </message>
    <message>
        <source>Skip certificate check</source>
        <translation>跳过证书检查</translation>
    </message>
    <message>
        <source>Skip verifying the API server's certificate. Only for throw-away clusters: the window shows a warning while it is on.</source>
        <translation>跳过对 API 服务器证书的验证。仅用于临时集群：开启期间窗口会显示警告。</translation>
    </message>
    <message>
        <source>GPU series node label</source>
        <translation>GPU 系列节点标签</translation>
    </message>
    <message>
        <source>Node label whose value is the GPU series (h200, h100, ...). One source for capacity figures and for the nodeSelector of every pool.</source>
        <translation>其值为 GPU 系列（h200、h100 等）的节点标签。容量数据和每个池的 nodeSelector 都以它为唯一依据。</translation>
    </message>
    <message>
        <source>Request GPUs from Kubernetes</source>
        <translation>向 Kubernetes 请求 GPU</translation>
    </message>
    <message>
        <source>Request nvidia.com/gpu for Ray pods. false only for GPU-less test clusters (kind, CI): Ray's logical GPUs stay.</source>
        <translation>为 Ray Pod 请求 nvidia.com/gpu。仅在没有 GPU 的测试集群（kind、CI）上设为 false：Ray 的逻辑 GPU 仍会保留。</translation>
    </message>
    <message>
        <source>Shared memory per pod</source>
        <translation>每个 Pod 的共享内存</translation>
    </message>
    <message>
        <source>Size of the in-memory /dev/shm volume of every Ray pod; Ray's object store lives there.</source>
        <translation>每个 Ray Pod 中基于内存的 /dev/shm 卷的大小；Ray 的对象存储就位于其中。</translation>
    </message>
    <message>
        <source>NeMo-RL image</source>
        <translation>NeMo-RL 镜像</translation>
    </message>
    <message>
        <source>Container image of the head, worker and submitter pods: NeMo-RL with Ray.</source>
        <translation>head、worker 和提交器 Pod 的容器镜像：带有 Ray 的 NeMo-RL。</translation>
    </message>
    <message>
        <source>NeMo-RL folder in the image</source>
        <translation>镜像中的 NeMo-RL 文件夹</translation>
    </message>
    <message>
        <source>Where NeMo-RL is installed inside the image; the runner starts its examples/ scripts from there.</source>
        <translation>NeMo-RL 在镜像中的安装位置；runner 从该位置启动其 examples/ 下的脚本。</translation>
    </message>
    <message>
        <source>vLLM image</source>
        <translation>vLLM 镜像</translation>
    </message>
    <message>
        <source>Container image of playground pods, serving an OpenAI-compatible API with vLLM.</source>
        <translation>试验场 Pod 的容器镜像，通过 vLLM 提供兼容 OpenAI 的 API。</translation>
    </message>
    <message>
        <source>Storage root in pods</source>
        <translation>Pod 中的存储根目录</translation>
    </message>
    <message>
        <source>The one storage root inside pods: jobs/&lt;id&gt;/ checkpoints and logs go under it.</source>
        <translation>Pod 内唯一的存储根目录：检查点和日志都存放在其下的 jobs/&lt;id&gt;/ 中。</translation>
    </message>
    <message>
        <source>Storage claim</source>
        <translation>存储卷声明</translation>
    </message>
    <message>
        <source>PersistentVolumeClaim mounted at the storage root in every Ray pod.</source>
        <translation>在每个 Ray Pod 中挂载到存储根目录的 PersistentVolumeClaim。</translation>
    </message>
    <message>
        <source>Claim shared between nodes</source>
        <translation>卷声明在节点间共享</translation>
    </message>
    <message>
        <source>Whether the storage claim is shared between nodes (ReadWriteMany). When false, jobs with more than one node are rejected before submission.</source>
        <translation>存储卷声明是否在节点之间共享（ReadWriteMany）。为 false 时，使用多个节点的作业会在提交前被拒绝。</translation>
    </message>
    <message>
        <source>Claim mount path</source>
        <translation>卷声明挂载路径</translation>
    </message>
    <message>
        <source>Mount path of the storage claim when pods cannot mount it at the storage root. Empty: mount at FORGE_STORAGE_ROOT.</source>
        <translation>当 Pod 无法将存储卷声明挂载到存储根目录时所用的挂载路径。留空：挂载到 FORGE_STORAGE_ROOT。</translation>
    </message>
    <message>
        <source>Corpus claim</source>
        <translation>语料卷声明</translation>
    </message>
    <message>
        <source>Optional read-only claim with training corpora, mounted into Ray pods of jobs that ask for it.</source>
        <translation>可选的只读卷声明，包含训练语料，会挂载到请求它的作业的 Ray Pod 中。</translation>
    </message>
    <message>
        <source>Endpoint</source>
        <translation>端点</translation>
    </message>
    <message>
        <source>URL of the S3-compatible object store that carries Capsules, logs and job history. https:// gives presigned working_dir URLs; http:// switches to the init-container download.</source>
        <translation>兼容 S3 的对象存储的 URL，用于传送 Capsule、日志和作业历史。使用 https:// 时提供预签名的 working_dir URL；使用 http:// 时改为由 Init 容器下载。</translation>
    </message>
    <message>
        <source>Bucket</source>
        <translation>存储桶</translation>
    </message>
    <message>
        <source>Bucket for capsules/&lt;sha256&gt;.zip and jobs/&lt;id&gt;/.</source>
        <translation>存放 capsules/&lt;sha256&gt;.zip 和 jobs/&lt;id&gt;/ 的存储桶。</translation>
    </message>
    <message>
        <source>Region</source>
        <translation>区域</translation>
    </message>
    <message>
        <source>Region used in SigV4 signatures. Most S3-compatible servers accept us-east-1.</source>
        <translation>SigV4 签名中使用的区域。大多数兼容 S3 的服务器都接受 us-east-1。</translation>
    </message>
    <message>
        <source>Path-style addressing</source>
        <translation>路径样式寻址</translation>
    </message>
    <message>
        <source>Address buckets as endpoint/bucket/key (path style) rather than bucket.endpoint/key (virtual-host style). Most self-hosted servers need path style.</source>
        <translation>以 endpoint/bucket/key（路径样式）而不是 bucket.endpoint/key（虚拟主机样式）的形式访问存储桶。大多数自托管服务器需要路径样式。</translation>
    </message>
    <message>
        <source>PEM file of the CA that signed the S3 endpoint's certificate, for a self-hosted store. Without it the system CA store is used.</source>
        <translation>为 S3 端点证书签名的 CA 的 PEM 文件，用于自托管的存储。如果没有它，则使用系统 CA 存储。</translation>
    </message>
    <message>
        <source>Proxy for the object store: http:// or socks5://. Empty: HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the environment.</source>
        <translation>访问对象存储所用的代理：http:// 或 socks5://。留空：使用环境变量中的 HTTPS_PROXY、HTTP_PROXY 和 NO_PROXY。</translation>
    </message>
    <message>
        <source>Access key</source>
        <translation>访问密钥</translation>
    </message>
    <message>
        <source>S3 access key id. Kept only in the OS keychain.</source>
        <translation>S3 访问密钥 ID。仅保存在操作系统钥匙串中。</translation>
    </message>
    <message>
        <source>Secret key</source>
        <translation>私密密钥</translation>
    </message>
    <message>
        <source>S3 secret access key. Kept only in the OS keychain.</source>
        <translation>S3 私密访问密钥。仅保存在操作系统钥匙串中。</translation>
    </message>
    <message>
        <source>Ray version</source>
        <translation>Ray 版本</translation>
    </message>
    <message>
        <source>rayVersion of every RayCluster: the Ray release in the image, compatible with the operator.</source>
        <translation>每个 RayCluster 的 rayVersion：镜像中的 Ray 版本，须与 operator 兼容。</translation>
    </message>
    <message>
        <source>Keep a finished cluster (s)</source>
        <translation>保留已结束的集群（秒）</translation>
    </message>
    <message>
        <source>ttlSecondsAfterFinished: seconds the operator keeps a finished job's RayCluster (the head and worker pods with their logs) before deleting it, whether or not the logs were archived. Logs are archived only while the app or `starforge-cli jobs --follow` runs, so this is how long a finished job may wait for one of them; past it the head and worker logs are lost. Meanwhile the job's idle Ray pods keep their GPUs.</source>
        <translation>ttlSecondsAfterFinished：operator 在删除已结束作业的 RayCluster（head 和 worker Pod 及其日志）之前将其保留的秒数，无论日志是否已归档。只有在应用或 `starforge-cli jobs --follow` 运行期间才会归档日志，因此这就是已结束作业等待二者之一的时长；超过此时长，head 和 worker 日志将会丢失。在此期间，该作业空闲的 Ray Pod 仍会占用其 GPU。</translation>
    </message>
    <message>
        <source>Start deadline (s)</source>
        <translation>启动截止时间（秒）</translation>
    </message>
    <message>
        <source>Seconds a job may spend before running (image pulls, scheduling) before it is failed and deleted, with the events that explain why kept.</source>
        <translation>作业在开始运行之前（拉取镜像、调度）最多可用的秒数；超时后作业将被标记为失败并删除，但会保留说明原因的事件。</translation>
    </message>
    <message>
        <source>Which Kubernetes cluster and namespace jobs go to, and whose they are.</source>
        <translation>作业发往哪个 Kubernetes 集群和命名空间，以及作业归谁所有。</translation>
    </message>
    <message>
        <source>How the app proves who you are to the API server: one of a token, a client certificate or a credential plugin.</source>
        <translation>应用如何向 API 服务器证明您的身份：令牌、客户端证书或凭据插件三者之一。</translation>
    </message>
    <message>
        <source>How the API server's certificate is checked and which proxy reaches it.</source>
        <translation>如何检查 API 服务器的证书，以及通过哪个代理访问它。</translation>
    </message>
    <message>
        <source>How GPU nodes are recognised and what every Ray pod is given.</source>
        <translation>如何识别 GPU 节点，以及为每个 Ray Pod 分配什么。</translation>
    </message>
    <message>
        <source>The container images training jobs and playground pods run.</source>
        <translation>训练作业和试验场 Pod 运行的容器镜像。</translation>
    </message>
    <message>
        <source>The shared volume in the pods where checkpoints and logs are written.</source>
        <translation>Pod 中用于写入检查点和日志的共享卷。</translation>
    </message>
    <message>
        <source>The bucket that carries your code to the cluster and keeps job history and archived logs.</source>
        <translation>将您的代码传送到集群、并保存作业历史和已归档日志的存储桶。</translation>
    </message>
    <message>
        <source>What every RayJob asks of the KubeRay operator: the Ray release, deadlines and clean-up.</source>
        <translation>每个 RayJob 对 KubeRay operator 的要求：Ray 版本、截止时间和清理。</translation>
    </message>
    <message>
        <source>text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>choice</source>
        <translation>选项</translation>
    </message>
    <message>
        <source>URL</source>
        <translation>URL</translation>
    </message>
    <message>
        <source>Kubernetes quantity</source>
        <translation>Kubernetes 资源数量</translation>
    </message>
    <message>
        <source>label key</source>
        <translation>标签键</translation>
    </message>
    <message>
        <source>DNS-1123 label</source>
        <translation>DNS-1123 标签</translation>
    </message>
    <message>
        <source>DNS-1123 subdomain</source>
        <translation>DNS-1123 子域名</translation>
    </message>
    <message>
        <source>integer</source>
        <translation>整数</translation>
    </message>
    <message>
        <source>boolean</source>
        <translation>布尔值</translation>
    </message>
    <message>
        <source>absolute path</source>
        <translation>绝对路径</translation>
    </message>
    <message>
        <source>image reference</source>
        <translation>镜像引用</translation>
    </message>
    <message>
        <source>bucket name</source>
        <translation>存储桶名称</translation>
    </message>
    <message>
        <source>version</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>PEM file</source>
        <translation>PEM 文件</translation>
    </message>
    <message>
        <source>base64 PEM</source>
        <translation>base64 PEM</translation>
    </message>
    <message>
        <source>proxy URL</source>
        <translation>代理 URL</translation>
    </message>
    <message>
        <source>exec plugin (JSON)</source>
        <translation>exec 插件 (JSON)</translation>
    </message>
    <message>
        <source>secret (keychain)</source>
        <translation>机密（钥匙串）</translation>
    </message>
    <message>
        <source>%1 must not be empty; its default is '%2'</source>
        <translation>%1 不能为空；其默认值为 '%2'</translation>
    </message>
    <message>
        <source>'%1' is not one of: %2</source>
        <translation>'%1' 不是以下值之一：%2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>%1 is not a setting; `starforge-cli settings` lists them</source>
        <translation>%1 不是设置项；`starforge-cli settings` 会列出所有设置项</translation>
    </message>
    <message>
        <source>%1 is not a setting (did you mean %2?); `starforge-cli settings` lists them</source>
        <translation>%1 不是设置项（您是否指的是 %2？）；`starforge-cli settings` 会列出所有设置项</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::BuildCommand</name>
    <message>
        <source>--kuberay-version takes a KubeRay release, e.g. --kuberay-version 1.7</source>
        <translation>--kuberay-version 需要一个 KubeRay 版本，例如 --kuberay-version 1.7</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::CapacityCommand</name>
    <message>
        <source>usage: starforge-cli capacity [--spec SPEC] [--json]</source>
        <translation>用法：starforge-cli capacity [--spec SPEC] [--json]</translation>
    </message>
    <message>
        <source>no GPU nodes: no node has the series label %1 (FORGE_K8S_GPU_NODE_LABEL)</source>
        <translation>没有 GPU 节点：没有任何节点带有系列标签 %1（FORGE_K8S_GPU_NODE_LABEL）</translation>
    </message>
    <message numerus="yes">
        <source> (%n node(s))</source>
        <translation><numerusform> (%n 个节点)</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::CapsuleBuildCommand</name>
    <message>
        <source>usage: starforge-cli capsule build DIR [--spec SPEC] [--out FILE] [--json]</source>
        <translation>用法：starforge-cli capsule build DIR [--spec SPEC] [--out FILE] [--json]</translation>
    </message>
    <message>
        <source>%1 is not a folder; give the code folder to pack.</source>
        <translation>%1 不是文件夹；请提供要打包的代码文件夹。</translation>
    </message>
    <message>
        <source>minimal (no --spec given), name %1</source>
        <translation>最简版（未指定 --spec），名称为 %1</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::ChatCommand</name>
    <message>
        <source>usage: starforge-cli playground chat NAME [PROMPT...] [--system S] [--temperature T] [--top-p P] [--max-tokens N] [--session FILE]</source>
        <translation>用法：starforge-cli playground chat NAME [PROMPT...] [--system S] [--temperature T] [--top-p P] [--max-tokens N] [--session FILE]</translation>
    </message>
    <message>
        <source>no prompt: give it after NAME or on standard input</source>
        <translation>没有提示词：请在 NAME 之后或通过标准输入提供</translation>
    </message>
    <message>
        <source>--temperature, --top-p and --max-tokens take numbers</source>
        <translation>--temperature、--top-p 和 --max-tokens 只接受数字</translation>
    </message>
    <message>
        <source>%1 is a conversation with nothing readable, not %2; give another --session file</source>
        <translation>%1 中的对话无法读出其对话对象，并非与 %2 的对话；请换一个 --session 文件</translation>
    </message>
    <message>
        <source>%1 is a conversation with %2, not %3; give another --session file</source>
        <translation>%1 是与 %2 的对话，而不是与 %3 的对话；请换一个 --session 文件</translation>
    </message>
    <message>
        <source>no playground pod of yours named %1 (see `starforge-cli playground list`)</source>
        <translation>您没有名为 %1 的试验场 Pod（请参阅 `starforge-cli playground list`）</translation>
    </message>
    <message numerus="yes">
        <source>%n token(s), first after %1 ms, %2 tokens/s</source>
        <translation><numerusform>%n 个 token，首个 token 用时 %1 ms，%2 token/s</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n token(s), first after %1 ms, %2 tokens/s (%3)</source>
        <translation><numerusform>%n 个 token，首个 token 用时 %1 ms，%2 token/s（%3）</numerusform></translation>
    </message>
    <message>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::CliApplication</name>
    <message>
        <source>%1 needs a subcommand: %2</source>
        <translation>%1 需要子命令：%2</translation>
    </message>
    <message>
        <source>unknown subcommand '%1 %2'; use %3</source>
        <translation>未知子命令 '%1 %2'；请使用 %3</translation>
    </message>
    <message>
        <source>unknown command '%1'; commands: %2 (see --help)</source>
        <translation>未知命令 '%1'；可用命令：%2（参见 --help）</translation>
    </message>
    <message>
        <source>usage: starforge-cli [--profile NAME | --connection-file FILE] [--config FILE] [--json] COMMAND ...
</source>
        <translation>用法：starforge-cli [--profile NAME | --connection-file FILE] [--config FILE] [--json] COMMAND ...
</translation>
    </message>
    <message>
        <source>Playground (vLLM pods of your own, reached through the API server's pod proxy):
  playground launch (--model PATH|NAME | --job ID [--step N]) [--series S] [--gpus N] [--ttl 2h] [--wait]
                                       serve a model, or a finished job's newest chat-ready checkpoint
  playground list                      your playground pods: state, model, series, GPUs, time left
  playground stop NAME                 delete one of them (expired and ended ones are reaped anyway)
  playground chat NAME [PROMPT] [--system S] [--temperature T] [--top-p P] [--max-tokens N] [--session FILE]
                                       stream a reply (PROMPT or stdin); --session keeps the conversation
</source>
        <translation>试验场（您自己的 vLLM Pod，通过 API 服务器的 Pod 代理访问）：
  playground launch (--model PATH|NAME | --job ID [--step N]) [--series S] [--gpus N] [--ttl 2h] [--wait]
                                       部署一个模型，或已结束作业最新的可聊天检查点
  playground list                      您的试验场 Pod：状态、模型、系列、GPU、剩余时间
  playground stop NAME                 删除其中一个（已过期和已结束的 Pod 总会被自动清理）
  playground chat NAME [PROMPT] [--system S] [--temperature T] [--top-p P] [--max-tokens N] [--session FILE]
                                       流式输出回复（PROMPT 或标准输入）；--session 保存对话
</translation>
    </message>
    <message>
        <source>Secrets (FORGE_K8S_TOKEN, FORGE_S3_ACCESS_KEY, FORGE_S3_SECRET_KEY) are kept in the OS keychain only
and are never taken as KEY=VALUE arguments. Environment variables FORGE_* override profile values.
The profile is --profile, else $STARFORGE_PROFILE, else the active one. Exit codes: 0 ok,
1 user error, 2 internal error, 3 the job followed by submit --wait ended Failed or Stopped,
130 interrupted (Ctrl-C cancels a submission in progress and removes what it made).
Messages are in the language of $STARFORGE_LANGUAGE (e.g. de, zh_CN, en), else the system's;
--json output stays English.
</source>
        <translation>机密项（FORGE_K8S_TOKEN、FORGE_S3_ACCESS_KEY、FORGE_S3_SECRET_KEY）仅保存在操作系统钥匙串中，
绝不以 KEY=VALUE 参数的形式接收。环境变量 FORGE_* 会覆盖配置文件中的值。
使用的配置文件依次为 --profile、$STARFORGE_PROFILE、活动配置文件。退出码：0 成功，
1 用户错误，2 内部错误，3 submit --wait 所跟踪的作业以 Failed 或 Stopped 结束，
130 被中断（Ctrl-C 会取消正在进行的提交，并删除其已创建的内容）。
消息使用 $STARFORGE_LANGUAGE 指定的语言（如 de、zh_CN、en），否则使用系统语言；
--json 输出始终为英文。
</translation>
    </message>
    <message>
        <source>Commands:
  profile list                         the profiles, the active one marked
  profile show [NAME]                  effective settings and where each comes from
  profile set NAME KEY=VALUE...        set settings (creates NAME); KEY= resets to the default
  profile set NAME KEY --stdin         read the value (e.g. a secret) from standard input
  profile set NAME KEY --from-env      save the value of environment variable KEY (e.g. a secret)
  profile import-kubeconfig [FILE] [--context C] [--name NAME]
                                       create or update a profile from a kubeconfig context
  profile use NAME                     make NAME the active profile
  profile rename OLD NEW | duplicate SOURCE NEW | delete NAME [--force]
  capsule build DIR [--spec SPEC] [--out FILE]
                                       pack DIR as a Capsule (default ./capsule.zip) with SPEC,
                                       else DIR/jobspec.json, else a minimal JobSpec; prints
                                       its SHA-256, size and file count
  settings [--markdown]                every setting: type, default, meaning
  check                                test the connection: API server, sign-in, KubeRay, what the
                                       token may do per feature, the bucket (exit 1 if a part fails)
  cluster-setup [--namespace NS] [--user NAME]
                                       the YAML a cluster administrator applies (kubectl apply -f -):
                                       Namespace, ServiceAccount NAME (default starforge-user) and its
                                       token Secret, the Role and ClusterRole every feature needs, bound
                                       to it; NS defaults to the profile's FORGE_K8S_NAMESPACE
</source>
        <translation>命令：
  profile list                         列出配置文件，并标出活动配置文件
  profile show [NAME]                  生效的设置及每项设置的来源
  profile set NAME KEY=VALUE...        修改设置（NAME 不存在时创建）；KEY= 恢复为默认值
  profile set NAME KEY --stdin         从标准输入读取值（例如机密项）
  profile set NAME KEY --from-env      保存环境变量 KEY 的值（例如机密项）
  profile import-kubeconfig [FILE] [--context C] [--name NAME]
                                       根据 kubeconfig 上下文创建或更新配置文件
  profile use NAME                     将 NAME 设为活动配置文件
  profile rename OLD NEW | duplicate SOURCE NEW | delete NAME [--force]
  capsule build DIR [--spec SPEC] [--out FILE]
                                       将 DIR 与 SPEC（否则为 DIR/jobspec.json，再否则为最小
                                       JobSpec）一起打包为 Capsule（默认 ./capsule.zip）；输出
                                       其 SHA-256、大小和文件数
  settings [--markdown]                所有设置：类型、默认值、含义
  check                                测试连接：API 服务器、登录、KubeRay、令牌在各功能上
                                       可做什么、存储桶（任一部分失败时退出码为 1）
  cluster-setup [--namespace NS] [--user NAME]
                                       集群管理员要应用的 YAML（kubectl apply -f -）：
                                       Namespace、ServiceAccount NAME（默认 starforge-user）及其
                                       令牌 Secret、每项功能所需的 Role 和 ClusterRole，并绑定到
                                       该账户；NS 默认为配置文件的 FORGE_K8S_NAMESPACE
</translation>
    </message>
    <message>
        <source>Jobs (on the profile's cluster and bucket, or the sandbox's with --connection-file FILE;
JOB is a job id or its RayJob name):
  manifest SPEC [--kuberay-version V]  the RayJob SPEC would make, as JSON; nothing is submitted
  submit SPEC [--wait] [--force]       build, upload and create the job; --wait follows it until it
                                       is archived (exit 0 Succeeded, 3 Failed or Stopped); a job
                                       that can never fit the cluster is refused unless --force
  jobs [--follow]                      the jobs on the cluster and their states; --follow keeps
                                       archiving each job that ends, one line each, until Ctrl-C
  status JOB                           state, times, pods, and why it is not running yet
  events JOB [--timeline]              the job's Kubernetes events, oldest first; --timeline draws
                                       them on lanes per object over the job's phases
  diagnose JOB                         the cause of a job that is not running, with evidence
  logs JOB [-f] [--pod P] [--container C] [--tail N] [--grep PATTERN [-i] [-E] [--count]]
                                       the driver's log (P: a pod, submitter, head or worker);
                                       from the archive once the job has ended
  capacity [--spec SPEC]               GPUs per series: total, used, free, blocked, largest free node;
                                       with SPEC, whether its pools fit now, once busy nodes free up, or never
  stop JOB                             stop a job; its logs and events are archived first
  delete JOB                           remove a job and its archive (the Capsule stays)
  history                              archived jobs, newest first
</source>
        <translation>作业（位于配置文件的集群和存储桶上，使用 --connection-file FILE 时则位于沙盒的集群和存储桶上；
JOB 为作业 ID 或其 RayJob 名称）：
  manifest SPEC [--kuberay-version V]  以 JSON 输出 SPEC 将生成的 RayJob；不提交任何内容
  submit SPEC [--wait] [--force]       构建、上传并创建作业；--wait 会跟踪它直到归档
                                       （Succeeded 时退出码为 0，Failed 或 Stopped 时为 3）；
                                       永远无法容纳于集群的作业会被拒绝，除非使用 --force
  jobs [--follow]                      集群上的作业及其状态；--follow 会持续归档每个结束的
                                       作业，每个一行，直到按下 Ctrl-C
  status JOB                           状态、时间、Pod，以及尚未运行的原因
  events JOB [--timeline]              作业的 Kubernetes 事件，最早的在前；--timeline 按对象
                                       分泳道，在作业的各阶段上绘制它们
  diagnose JOB                         作业未运行的原因及证据
  logs JOB [-f] [--pod P] [--container C] [--tail N] [--grep PATTERN [-i] [-E] [--count]]
                                       driver 的日志（P：某个 Pod、submitter、head 或 worker）；
                                       作业结束后从归档读取
  capacity [--spec SPEC]               每个系列的 GPU：总数、已用、空闲、受阻、最大空闲节点；
                                       给出 SPEC 时，判断其池是现在可容纳、繁忙节点空出后可容纳还是永远无法容纳
  stop JOB                             停止作业；先归档其日志和事件
  delete JOB                           删除作业及其归档（Capsule 保留）
  history                              已归档的作业，最新的在前
</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::ClusterSetupCommand</name>
    <message>
        <source>usage: starforge-cli cluster-setup [--namespace NS] [--user NAME]</source>
        <translation>用法：starforge-cli cluster-setup [--namespace NS] [--user NAME]</translation>
    </message>
    <message>
        <source>--namespace</source>
        <translation>--namespace</translation>
    </message>
    <message>
        <source>there is no profile '%1' (see `starforge-cli profile list`)</source>
        <translation>不存在配置文件 '%1'（参见 `starforge-cli profile list`）</translation>
    </message>
    <message>
        <source>the environment (FORGE_K8S_NAMESPACE)</source>
        <translation>环境变量（FORGE_K8S_NAMESPACE）</translation>
    </message>
    <message>
        <source>profile %1</source>
        <translation>配置文件 %1</translation>
    </message>
    <message>
        <source>the default of FORGE_K8S_NAMESPACE</source>
        <translation>FORGE_K8S_NAMESPACE 的默认值</translation>
    </message>
    <message>
        <source>namespace %1 (from %2), ServiceAccount %3; apply with `kubectl apply -f -`, then give the token in Secret %4 to the researchers' profiles (docs/cluster-setup.md).</source>
        <translation>命名空间 %1（来自 %2），ServiceAccount %3；请用 `kubectl apply -f -` 应用，然后将 Secret %4 中的令牌提供给研究人员的配置文件（docs/cluster-setup.md）。</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::Command</name>
    <message>
        <source>warning: TLS verification is off (FORGE_K8S_INSECURE_SKIP_TLS_VERIFY): anyone on the network path to %1 can read and change what is sent, the token included. Use it only with throw-away clusters.</source>
        <translation>警告：TLS 验证已关闭（FORGE_K8S_INSECURE_SKIP_TLS_VERIFY）：到 %1 的网络路径上的任何人都能读取和篡改发送的内容，包括令牌。仅可用于临时集群。</translation>
    </message>
    <message>
        <source>note: %1</source>
        <translation>注意：%1</translation>
    </message>
    <message>
        <source>give --profile or --connection-file, not both</source>
        <translation>请指定 --profile 或 --connection-file 之一，不要同时指定</translation>
    </message>
    <message>
        <source>no connection profile is active: pass --profile NAME or --connection-file FILE (the sandbox's), or make one with `starforge-cli profile import-kubeconfig`</source>
        <translation>没有活动的连接配置：请传入 --profile NAME 或 --connection-file FILE（沙盒的连接文件），或用 `starforge-cli profile import-kubeconfig` 创建一个</translation>
    </message>
    <message>
        <source>there is no profile '%1' (see `starforge-cli profile list`)</source>
        <translation>不存在配置文件 '%1'（参见 `starforge-cli profile list`）</translation>
    </message>
    <message>
        <source>usage: starforge-cli %1</source>
        <translation>用法：starforge-cli %1</translation>
    </message>
    <message>
        <source>'%1' is not a job id or a RayJob name (see `starforge-cli jobs` and `starforge-cli history`)</source>
        <translation>'%1' 不是作业 ID 或 RayJob 名称（参见 `starforge-cli jobs` 和 `starforge-cli history`）</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::DeleteCommand</name>
    <message numerus="yes">
        <source>deleted job %1: its RayJob and its archive (%n object(s))</source>
        <translation><numerusform>已删除作业 %1：其 RayJob 及其归档（%n 个对象）</numerusform></translation>
    </message>
    <message>
        <source>deleted job %1: its RayJob</source>
        <translation>已删除作业 %1：其 RayJob</translation>
    </message>
    <message numerus="yes">
        <source>deleted job %1: its archive (%n object(s))</source>
        <translation><numerusform>已删除作业 %1：其归档（%n 个对象）</numerusform></translation>
    </message>
    <message>
        <source>deleted job %1: </source>
        <translation>已删除作业 %1： </translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::EventsCommand</name>
    <message>
        <source>events: --json and --timeline are two different outputs; give one of them</source>
        <translation>events：--json 和 --timeline 是两种不同的输出；请只指定其中一个</translation>
    </message>
    <message>
        <source>the event journal %1 is not read: %2</source>
        <translation>未读取事件日志 %1：%2</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::HistoryCommand</name>
    <message>
        <source>usage: starforge-cli history [--json]</source>
        <translation>用法：starforge-cli history [--json]</translation>
    </message>
    <message>
        <source>starforge-cli: skipped %1</source>
        <translation>starforge-cli: 已跳过 %1</translation>
    </message>
    <message>
        <source>no archived jobs in the bucket yet</source>
        <translation>存储桶中尚无已归档的作业</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::JobCommand</name>
    <message>
        <source>job %1 is not on the cluster, and the archive cannot be read: %2</source>
        <translation>作业 %1 不在集群上，且无法读取归档：%2</translation>
    </message>
    <message>
        <source>job %1 is neither on the cluster nor in the job history</source>
        <translation>作业 %1 既不在集群上，也不在作业历史中</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::JobsCommand</name>
    <message>
        <source>usage: starforge-cli jobs [--follow] [--json]</source>
        <translation>用法：starforge-cli jobs [--follow] [--json]</translation>
    </message>
    <message>
        <source>list the jobs in namespace %1</source>
        <translation>列出命名空间 %1 中的作业</translation>
    </message>
    <message>
        <source>no jobs on the cluster in namespace %1 (ended jobs: starforge-cli history)</source>
        <translation>集群的命名空间 %1 中没有作业（已结束的作业：starforge-cli history）</translation>
    </message>
    <message>
        <source>stopped following; jobs that end from now on are archived by the app or the next `jobs --follow`</source>
        <translation>已停止跟踪；此后结束的作业将由应用或下一次 `jobs --follow` 归档</translation>
    </message>
    <message>
        <source>cannot follow jobs: %1</source>
        <translation>无法跟踪作业：%1</translation>
    </message>
    <message>
        <source>cannot follow jobs: the job tracker is off</source>
        <translation>无法跟踪作业：作业跟踪器已关闭</translation>
    </message>
    <message>
        <source>following the jobs in namespace %1; each job that ends is archived to the bucket (Ctrl-C to stop)</source>
        <translation>正在跟踪命名空间 %1 中的作业；每个结束的作业都会归档到存储桶（按 Ctrl-C 停止）</translation>
    </message>
    <message>
        <source>archived %1 %2 %3</source>
        <translation>已归档 %1 %2 %3</translation>
    </message>
    <message numerus="yes">
        <source>archived %1 %2 %3 (%n not archived)</source>
        <translation><numerusform>已归档 %1 %2 %3（%n 项未归档）</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::LaunchCommand</name>
    <message>
        <source>usage: starforge-cli playground launch (--model PATH|NAME | --job ID [--step N]) [--series S] [--gpus N] [--ttl 2h] [--wait]</source>
        <translation>用法：starforge-cli playground launch (--model PATH|NAME | --job ID [--step N]) [--series S] [--gpus N] [--ttl 2h] [--wait]</translation>
    </message>
    <message>
        <source>give either --model or --job
%1</source>
        <translation>请指定 --model 或 --job 之一
%1</translation>
    </message>
    <message>
        <source>--gpus takes a number of GPUs (the tensor parallel size)</source>
        <translation>--gpus 的值应为 GPU 数量（张量并行大小）</translation>
    </message>
    <message>
        <source>--ttl takes a duration such as 90m, 2h or 3600, not '%1'</source>
        <translation>--ttl 的值应为时长，例如 90m、2h 或 3600，而不是 '%1'</translation>
    </message>
    <message>
        <source>%1 (a job's checkpoints are served once it has ended)</source>
        <translation>%1（作业结束后才能部署其检查点）</translation>
    </message>
    <message>
        <source>job %1 belongs to nobody recorded; the playground serves only your own jobs' checkpoints</source>
        <translation>作业 %1 没有记录所有者；试验场只部署您自己作业的检查点</translation>
    </message>
    <message>
        <source>job %1 belongs to %2; the playground serves only your own jobs' checkpoints</source>
        <translation>作业 %1 属于 %2；试验场只部署您自己作业的检查点</translation>
    </message>
    <message>
        <source>its %1 checkpoints have no Hugging Face weights and no converter</source>
        <translation>其 %1 检查点没有 Hugging Face 权重，也没有转换器</translation>
    </message>
    <message>
        <source>its %1 checkpoints need NeMo-RL's %2 first</source>
        <translation>其 %1 检查点需要先用 NeMo-RL 的 %2 转换</translation>
    </message>
    <message>
        <source>job %1 has no checkpoint at step %2 vLLM can serve</source>
        <translation>作业 %1 在第 %2 步没有 vLLM 可部署的检查点</translation>
    </message>
    <message>
        <source>job %1 has no checkpoint at step %2 vLLM can serve: %3</source>
        <translation>作业 %1 在第 %2 步没有 vLLM 可部署的检查点：%3</translation>
    </message>
    <message>
        <source>job %1 has no checkpoint vLLM can serve</source>
        <translation>作业 %1 没有 vLLM 可部署的检查点</translation>
    </message>
    <message>
        <source>job %1 has no checkpoint vLLM can serve: %2</source>
        <translation>作业 %1 没有 vLLM 可部署的检查点：%2</translation>
    </message>
    <message>
        <source>%1 launched: %2 on %3</source>
        <translation>%1 已启动：%2，位于 %3</translation>
    </message>
    <message>
        <source>ask %1 for its health</source>
        <translation>向 %1 查询其健康状态</translation>
    </message>
    <message>
        <source>%1 ready</source>
        <translation>%1 已就绪</translation>
    </message>
    <message>
        <source>%1 ended before it was ready (%2); see `kubectl logs %1`</source>
        <translation>%1 在就绪前已结束（%2）；请查看 `kubectl logs %1`</translation>
    </message>
    <message>
        <source>%1 is waiting: %2: %3</source>
        <translation>%1 正在等待：%2：%3</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::LogsCommand</name>
    <message>
        <source>--count needs the whole log: leave out -f, or --count</source>
        <translation>--count 需要完整日志：请去掉 -f 或 --count</translation>
    </message>
    <message>
        <source>-i, -E and --count go with --grep PATTERN</source>
        <translation>-i、-E 和 --count 需与 --grep PATTERN 一起使用</translation>
    </message>
    <message>
        <source>--tail takes a number of lines, e.g. --tail 100, not '%1'</source>
        <translation>--tail 的值应为行数，例如 --tail 100，而不是 '%1'</translation>
    </message>
    <message>
        <source>job %1 has no pods yet (see `starforge-cli status %1`)</source>
        <translation>作业 %1 还没有 Pod（参见 `starforge-cli status %1`）</translation>
    </message>
    <message>
        <source>job %1 has no pod '%2'; its pods: %3</source>
        <translation>作业 %1 没有 Pod '%2'；其 Pod：%3</translation>
    </message>
    <message>
        <source>cannot make a temporary file for the log: %1</source>
        <translation>无法为日志创建临时文件：%1</translation>
    </message>
    <message>
        <source>starforge-cli: pod %1 is gone (the job ended?); its archived log: starforge-cli logs %2</source>
        <translation>starforge-cli: Pod %1 已不存在（作业已结束？）；其归档日志：starforge-cli logs %2</translation>
    </message>
    <message>
        <source>%1 Gave up after %2 s.</source>
        <translation>%1 %2 秒后放弃。</translation>
    </message>
    <message>
        <source>starforge-cli: log interrupted (%1); reconnecting</source>
        <translation>starforge-cli: 日志中断（%1）；正在重新连接</translation>
    </message>
    <message>
        <source>cannot make a temporary file for the archived log: %1</source>
        <translation>无法为归档日志创建临时文件：%1</translation>
    </message>
    <message>
        <source>%1 is not in the archive.</source>
        <translation>%1 不在归档中。</translation>
    </message>
    <message>
        <source>cannot read the downloaded log %1: %2</source>
        <translation>无法读取已下载的日志 %1：%2</translation>
    </message>
    <message>
        <source>job %1 is not on the cluster, and the archive cannot be read: %2</source>
        <translation>作业 %1 不在集群上，且无法读取归档：%2</translation>
    </message>
    <message>
        <source>job %1 was archived without logs</source>
        <translation>作业 %1 归档时没有日志</translation>
    </message>
    <message>
        <source>job %1 was archived without logs: %2</source>
        <translation>作业 %1 归档时没有日志：%2</translation>
    </message>
    <message>
        <source>the archive of job %1 has no log for '%2'; it has: %3</source>
        <translation>作业 %1 的归档中没有 '%2' 的日志；其中有：%3</translation>
    </message>
    <message>
        <source>the archive of job %1 is damaged: its log %2/%3 is kept under '%4', outside %5</source>
        <translation>作业 %1 的归档已损坏：其日志 %2/%3 保存在 '%4' 下，位于 %5 之外</translation>
    </message>
    <message>
        <source>starforge-cli: job %1 has ended; showing its archived log</source>
        <translation>starforge-cli: 作业 %1 已结束；显示其归档日志</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::PlaygroundCommand</name>
    <message>
        <source>the owner is unknown; set FORGE_OWNER (the playground acts only on your own pods)</source>
        <translation>所有者未知；请设置 FORGE_OWNER（试验场只操作您自己的 Pod）</translation>
    </message>
    <message>
        <source>reaped %1</source>
        <translation>已清理 %1</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::ProfileCommand</name>
    <message numerus="yes">
        <source>starforge-cli: note: moved %n secret(s) from the settings file into the keychain</source>
        <translation><numerusform>starforge-cli: 注意：已将 %n 个机密项从设置文件移入钥匙串</numerusform></translation>
    </message>
    <message>
        <source>No profiles yet. Create one with `starforge-cli profile set NAME FORGE_K8S_API_SERVER=https://...` or `starforge-cli profile import-kubeconfig`.</source>
        <translation>尚无配置文件。请用 `starforge-cli profile set NAME FORGE_K8S_API_SERVER=https://...` 或 `starforge-cli profile import-kubeconfig` 创建一个。</translation>
    </message>
    <message>
        <source>there is no profile named '%1'; `starforge-cli profile list` shows them</source>
        <translation>不存在名为 '%1' 的配置文件；`starforge-cli profile list` 会列出所有配置文件</translation>
    </message>
    <message>
        <source>(set)</source>
        <translation>（已设置）</translation>
    </message>
    <message>
        <source> (invalid: %1)</source>
        <translation> (无效：%1)</translation>
    </message>
    <message>
        <source>Profile: (none: defaults and environment only)</source>
        <translation>配置文件：（无：仅默认值和环境变量）</translation>
    </message>
    <message>
        <source>Profile: %1 (active)</source>
        <translation>配置文件：%1（活动）</translation>
    </message>
    <message>
        <source>Profile: %1</source>
        <translation>配置文件：%1</translation>
    </message>
    <message>
        <source>starforge-cli: warning: secrets not shown: %1</source>
        <translation>starforge-cli: 警告：未显示机密项：%1</translation>
    </message>
    <message>
        <source>usage: starforge-cli profile set NAME KEY=VALUE... | NAME KEY --stdin | NAME KEY --from-env</source>
        <translation>用法：starforge-cli profile set NAME KEY=VALUE... | NAME KEY --stdin | NAME KEY --from-env</translation>
    </message>
    <message>
        <source>use either --stdin or --from-env, not both</source>
        <translation>请使用 --stdin 或 --from-env 之一，不要同时使用</translation>
    </message>
    <message>
        <source>with --stdin or --from-env give exactly one KEY, without '='</source>
        <translation>使用 --stdin 或 --from-env 时，请只给出一个 KEY，且不带 '='</translation>
    </message>
    <message>
        <source>the environment variable %1 is not set</source>
        <translation>环境变量 %1 未设置</translation>
    </message>
    <message>
        <source>'%1' is not KEY=VALUE; write e.g. FORGE_K8S_NAMESPACE=ml-team</source>
        <translation>'%1' 不是 KEY=VALUE 形式；请写成例如 FORGE_K8S_NAMESPACE=ml-team</translation>
    </message>
    <message>
        <source>%1 is a secret and is not taken on the command line, where shell history and process listings would keep it; use `profile set %2 %1 --stdin` or --from-env</source>
        <translation>%1 是机密项，不能在命令行中提供，否则 shell 历史和进程列表会保留它；请使用 `profile set %2 %1 --stdin` 或 --from-env</translation>
    </message>
    <message>
        <source>created profile %1</source>
        <translation>已创建配置文件 %1</translation>
    </message>
    <message>
        <source>updated profile %1</source>
        <translation>已更新配置文件 %1</translation>
    </message>
    <message>
        <source>created profile %1 (%2 in the keychain)</source>
        <translation>已创建配置文件 %1（%2 保存在钥匙串中）</translation>
    </message>
    <message>
        <source>updated profile %1 (%2 in the keychain)</source>
        <translation>已更新配置文件 %1（%2 保存在钥匙串中）</translation>
    </message>
    <message>
        <source>%1; choose a name with --name</source>
        <translation>%1；请用 --name 指定名称</translation>
    </message>
    <message>
        <source>created profile %1 from context %2 (%3)</source>
        <translation>已根据上下文 %2（%3）创建配置文件 %1</translation>
    </message>
    <message>
        <source>updated profile %1 from context %2 (%3)</source>
        <translation>已根据上下文 %2（%3）更新配置文件 %1</translation>
    </message>
    <message>
        <source>note: %1</source>
        <translation>注意：%1</translation>
    </message>
    <message>
        <source>usage: starforge-cli profile delete NAME [--force]</source>
        <translation>用法：starforge-cli profile delete NAME [--force]</translation>
    </message>
    <message>
        <source>starforge-cli: warning: %1</source>
        <translation>starforge-cli: 警告：%1</translation>
    </message>
    <message>
        <source>deleted profile %1</source>
        <translation>已删除配置文件 %1</translation>
    </message>
    <message>
        <source>usage: starforge-cli profile use NAME</source>
        <translation>用法：starforge-cli profile use NAME</translation>
    </message>
    <message>
        <source>active profile: %1</source>
        <translation>活动配置文件：%1</translation>
    </message>
    <message>
        <source>usage: starforge-cli profile rename OLD NEW</source>
        <translation>用法：starforge-cli profile rename OLD NEW</translation>
    </message>
    <message>
        <source>renamed profile %1 to %2</source>
        <translation>已将配置文件 %1 重命名为 %2</translation>
    </message>
    <message>
        <source>usage: starforge-cli profile duplicate SOURCE NEW</source>
        <translation>用法：starforge-cli profile duplicate SOURCE NEW</translation>
    </message>
    <message>
        <source>duplicated profile %1 as %2</source>
        <translation>已将配置文件 %1 复制为 %2</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::StatusCommand</name>
    <message>
        <source>job %1 is not on the cluster, and the archive cannot be read: %2</source>
        <translation>作业 %1 不在集群上，且无法读取归档：%2</translation>
    </message>
    <message numerus="yes">
        <source>%n log(s)</source>
        <translation><numerusform>%n 个日志</numerusform></translation>
    </message>
    <message>
        <source>  not archived: %1</source>
        <translation>  未归档：%1</translation>
    </message>
    <message>
        <source>%1 (%2 ago)</source>
        <translation>%1（%2 前）</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::StopCommand</name>
    <message>
        <source>lost the cluster while stopping job %1: %2</source>
        <translation>停止作业 %1 时与集群失去连接：%2</translation>
    </message>
    <message>
        <source>job %1 has already ended: it is %2 (see `starforge-cli status %1`); there is nothing to stop</source>
        <translation>作业 %1 已经结束：其状态为 %2（参见 `starforge-cli status %1`）；没有可停止的内容</translation>
    </message>
    <message>
        <source>job %1 %2; its logs and events are in jobs/%1/</source>
        <translation>作业 %1：%2；其日志和事件位于 jobs/%1/ 中</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::StopPlaygroundCommand</name>
    <message>
        <source>usage: starforge-cli playground stop NAME</source>
        <translation>用法：starforge-cli playground stop NAME</translation>
    </message>
    <message>
        <source>%1 stopped</source>
        <translation>%1 已停止</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::SubmitCommand</name>
    <message>
        <source>interrupted again; quitting without cleaning up</source>
        <translation>再次中断；不做清理直接退出</translation>
    </message>
    <message>
        <source>cancelling the submission (Ctrl-C again to quit at once)...</source>
        <translation>正在取消提交（再按一次 Ctrl-C 立即退出）...</translation>
    </message>
    <message>
        <source>stopped waiting; the job goes on (see starforge-cli status)</source>
        <translation>已停止等待；作业仍在继续（参见 starforge-cli status）</translation>
    </message>
    <message>
        <source>whether the job fits was not checked: the capacity is unknown</source>
        <translation>未检查作业能否容纳：容量未知</translation>
    </message>
    <message>
        <source>whether the job fits was not checked: %1</source>
        <translation>未检查作业能否容纳：%1</translation>
    </message>
    <message>
        <source>pool %1: %2</source>
        <translation>池 %1：%2</translation>
    </message>
    <message>
        <source>the job can never run on this cluster as it is, so nothing was built or uploaded:
  %1
Change the pools (see starforge-cli capacity), or submit it anyway with --force: it then waits as Pending until the cluster has the nodes.</source>
        <translation>该作业在此集群当前的状态下永远无法运行，因此未构建或上传任何内容：
  %1
请修改池（参见 starforge-cli capacity），或使用 --force 仍然提交：之后它会以 Pending 状态等待，直到集群有这些节点。</translation>
    </message>
    <message>
        <source>warning: it waits for busy GPUs: %1</source>
        <translation>警告：它需要等待繁忙的 GPU：%1</translation>
    </message>
    <message>
        <source>warning: %1</source>
        <translation>警告：%1</translation>
    </message>
    <message>
        <source>submitted job %1 (RayJob %2 in %3)</source>
        <translation>已提交作业 %1（命名空间 %3 中的 RayJob %2）</translation>
    </message>
    <message>
        <source>%1, %2, already in the bucket</source>
        <translation>%1，%2，已在存储桶中</translation>
    </message>
    <message>
        <source>%1, %2, %3 uploaded</source>
        <translation>%1，%2，已上传 %3</translation>
    </message>
    <message>
        <source>its logs are archived to the bucket while the Starforge app or `starforge-cli jobs --follow` runs; without either, the cluster deletes the head and worker logs %1 after the job ends (FORGE_KUBERAY_TTL_SECONDS)</source>
        <translation>在 Starforge 应用或 `starforge-cli jobs --follow` 运行期间，其日志会归档到存储桶；若两者都未运行，集群会在作业结束 %1后删除 head 和 worker 日志（FORGE_KUBERAY_TTL_SECONDS）</translation>
    </message>
    <message>
        <source>lost the cluster while waiting for job %1: %2 The job may still run; see `starforge-cli status %1` once the cluster answers.</source>
        <translation>等待作业 %1 时与集群失去连接：%2 作业可能仍在运行；集群恢复应答后请查看 `starforge-cli status %1`。</translation>
    </message>
    <message>
        <source>%1: why %2: %3</source>
        <translation>%1：原因 %2：%3</translation>
    </message>
    <message>
        <source>  not archived: %1</source>
        <translation>  未归档：%1</translation>
    </message>
    <message>
        <source>job %1 was deleted before it ended (starforge-cli delete); nothing was archived</source>
        <translation>作业 %1 在结束前已被删除（starforge-cli delete）；未归档任何内容</translation>
    </message>
</context>
<context>
    <name>Starforge::Config::EmbeddedSandbox</name>
    <message>
        <source>cannot read the sandbox connection file %1: %2</source>
        <translation>无法读取沙盒连接文件 %1：%2</translation>
    </message>
    <message>
        <source>%1 is not a starforge-sandbox connection file (no "forge" values)</source>
        <translation>%1 不是 starforge-sandbox 连接文件（没有 "forge" 值）</translation>
    </message>
    <message>
        <source>starforge-sandbox stopped (exit code %1) before it was ready: %2</source>
        <translation>starforge-sandbox 在就绪前已停止（退出码 %1）：%2</translation>
    </message>
    <message>
        <source>cannot start %1: %2 (build it with scripts/run.sh)</source>
        <translation>无法启动 %1：%2（请用 scripts/run.sh 构建它）</translation>
    </message>
    <message>
        <source>starforge-sandbox did not become ready within %1 s</source>
        <translation>starforge-sandbox 未在 %1 秒内就绪</translation>
    </message>
</context>
<context>
    <name>Starforge::Config::ProfileManager</name>
    <message>
        <source>%1
Nothing was changed.</source>
        <translation>%1
未做任何更改。</translation>
    </message>
    <message>
        <source>there is no profile named '%1'</source>
        <translation>不存在名为 '%1' 的配置文件</translation>
    </message>
    <message>
        <source>%1 Nothing was changed.</source>
        <translation>%1 未做任何更改。</translation>
    </message>
    <message>
        <source>%1 The profile was not imported.</source>
        <translation>%1 未导入该配置文件。</translation>
    </message>
    <message>
        <source>%1 The profile was not duplicated.</source>
        <translation>%1 未复制该配置文件。</translation>
    </message>
    <message>
        <source>%1 The profile was not renamed.</source>
        <translation>%1 未重命名该配置文件。</translation>
    </message>
    <message>
        <source>%1 The profile was kept so that its secrets are not orphaned; delete it with --force to leave them in the keychain.</source>
        <translation>%1 已保留该配置文件，以免其机密项成为孤立项；若要删除它并将机密项留在钥匙串中，请使用 --force。</translation>
    </message>
    <message>
        <source>the secrets of profile '%1' may remain in the keychain (service starforge); remove them with: secret-tool clear server starforge user %1/FORGE_K8S_TOKEN, and likewise for FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY</source>
        <translation>配置文件 '%1' 的机密项可能仍留在钥匙串中（服务 starforge）；可用以下命令删除：secret-tool clear server starforge user %1/FORGE_K8S_TOKEN，FORGE_S3_ACCESS_KEY 和 FORGE_S3_SECRET_KEY 同理</translation>
    </message>
    <message>
        <source>%1 The settings file still holds secrets; they move into the keychain the next time it answers.</source>
        <translation>%1 设置文件中仍有机密项；待钥匙串下次应答时，它们会被移入钥匙串。</translation>
    </message>
</context>
<context>
    <name>Starforge::ConnectionTest</name>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>API server</source>
        <translation>API 服务器</translation>
    </message>
    <message>
        <source>Signed in as</source>
        <translation>登录身份</translation>
    </message>
    <message>
        <source>KubeRay operator</source>
        <translation>KubeRay operator</translation>
    </message>
    <message>
        <source>Object storage bucket</source>
        <translation>对象存储桶</translation>
    </message>
    <message>
        <source>The settings could not be read.</source>
        <translation>无法读取设置。</translation>
    </message>
    <message>
        <source>The credentials were refused: set a current token, client certificate or credential plugin under Sign-in.</source>
        <translation>凭据被拒绝：请在“登录”下设置当前有效的令牌、客户端证书或凭据插件。</translation>
    </message>
    <message>
        <source>%1 of %2 checks passed</source>
        <translation>%2 项检查中通过 %1 项</translation>
    </message>
    <message>
        <source>, %1 with a warning</source>
        <translation>，%1 项有警告</translation>
    </message>
    <message>
        <source>, %1 failed</source>
        <translation>，%1 项失败</translation>
    </message>
    <message>
        <source>, %1 not tried</source>
        <translation>，%1 项未尝试</translation>
    </message>
    <message>
        <source>A setting is invalid.</source>
        <translation>某项设置无效。</translation>
    </message>
    <message>
        <source>The cluster's settings are incomplete.</source>
        <translation>集群设置不完整。</translation>
    </message>
    <message>
        <source>Valid; namespace %1.</source>
        <translation>有效；命名空间 %1。</translation>
    </message>
    <message>
        <source>reach the API server</source>
        <translation>访问 API 服务器</translation>
    </message>
    <message>
        <source>%1 answered.</source>
        <translation>%1 已应答。</translation>
    </message>
    <message>
        <source>The credentials were refused.</source>
        <translation>凭据被拒绝。</translation>
    </message>
    <message>
        <source>Check FORGE_K8S_API_SERVER, the CA settings under Network, and that this machine can reach %1.</source>
        <translation>请检查 FORGE_K8S_API_SERVER、“网络”下的 CA 设置，以及本机能否访问 %1。</translation>
    </message>
    <message>
        <source>The API server did not answer.</source>
        <translation>API 服务器没有应答。</translation>
    </message>
    <message>
        <source>Kubernetes %1 at %2.</source>
        <translation>%2 上的 Kubernetes %1。</translation>
    </message>
    <message>
        <source>%1; your jobs are recorded as theirs.</source>
        <translation>%1；您的作业以该身份记录。</translation>
    </message>
    <message>
        <source>%1; your jobs are recorded as %2 (FORGE_OWNER).</source>
        <translation>%1；您的作业记录为 %2（FORGE_OWNER）。</translation>
    </message>
    <message>
        <source>%1 (FORGE_OWNER); the cluster could not say more: %2</source>
        <translation>%1（FORGE_OWNER）；集群无法提供更多信息：%2</translation>
    </message>
    <message>
        <source>The cluster could not say who you are: %1</source>
        <translation>集群无法确认您的身份：%1</translation>
    </message>
    <message>
        <source>Set FORGE_OWNER to the same name on every workstation you use, so your jobs stay yours.</source>
        <translation>请在您使用的每台工作站上将 FORGE_OWNER 设为相同的名称，以便您的作业始终归属于您。</translation>
    </message>
    <message>
        <source>Allow get on customresourcedefinitions (apiextensions.k8s.io) at the cluster scope, or set the release with --kuberay-version in starforge-cli.</source>
        <translation>请在集群范围内允许对 customresourcedefinitions（apiextensions.k8s.io）执行 get，或在 starforge-cli 中用 --kuberay-version 指定版本。</translation>
    </message>
    <message>
        <source>Ask the cluster's administrators to install KubeRay 1.4 or newer (1.7 is what Starforge is built against).</source>
        <translation>请让集群管理员安装 KubeRay 1.4 或更高版本（Starforge 基于 1.7 构建）。</translation>
    </message>
    <message>
        <source>Allowed in namespace %1.</source>
        <translation>在命名空间 %1 中已允许。</translation>
    </message>
    <message>
        <source>Unavailable: the token cannot %1.</source>
        <translation>不可用：该令牌无法%1。</translation>
    </message>
    <message>
        <source>A cluster administrator can grant it with these Role rules:
%1</source>
        <translation>集群管理员可以用以下 Role 规则授予该权限：
%1</translation>
    </message>
    <message>
        <source>Jobs ship their code and keep their history there; set the Object storage (S3) settings.</source>
        <translation>作业通过它传送代码并保存历史记录；请填写“对象存储 (S3)”设置。</translation>
    </message>
    <message>
        <source>%1 at %2</source>
        <translation>%2 上的 %1</translation>
    </message>
    <message>
        <source>Check the Object storage (S3) settings: the endpoint, and the access and secret keys.</source>
        <translation>请检查“对象存储 (S3)”设置：端点，以及访问密钥和私密密钥。</translation>
    </message>
    <message>
        <source>Bucket %1 can be read.</source>
        <translation>存储桶 %1 可读取。</translation>
    </message>
</context>
<context>
    <name>Starforge::Events::EventJournal</name>
    <message>
        <source>Cannot %1 the event journal %2: %3. Check that the folder can be written and the disk is not full.</source>
        <translation>无法%1事件日志 %2：%3。请检查文件夹是否可写，以及磁盘是否已满。</translation>
    </message>
    <message>
        <source>open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>read</source>
        <translation>读取</translation>
    </message>
    <message>
        <source>The event journal %1 was written by a newer Starforge (schema version %2; this one knows up to %3). Use that Starforge, or move the file away to start a new journal.</source>
        <translation>事件日志 %1 由更新版本的 Starforge 写入（模式版本 %2；此版本最高支持 %3）。请使用该版本的 Starforge，或将该文件移走以开始新的日志。</translation>
    </message>
    <message>
        <source>check</source>
        <translation>检查</translation>
    </message>
    <message>
        <source>%1 is an SQLite database but not a Starforge event journal. Move it away, and Starforge starts a new journal there.</source>
        <translation>%1 是 SQLite 数据库，但不是 Starforge 事件日志。将其移走后，Starforge 会在此处开始新的日志。</translation>
    </message>
    <message>
        <source>write</source>
        <translation>写入</translation>
    </message>
    <message>
        <source>set up</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>The event journal needs a file name.</source>
        <translation>事件日志需要文件名。</translation>
    </message>
    <message>
        <source>The event journal's size bound (%1 bytes) is too small: give it at least %2 bytes.</source>
        <translation>事件日志的大小上限（%1 字节）太小：请至少设为 %2 字节。</translation>
    </message>
    <message>
        <source>The event journal must keep events for at least a day (maxAgeDays is %1).</source>
        <translation>事件日志必须至少保留一天的事件（maxAgeDays 为 %1）。</translation>
    </message>
    <message>
        <source>Qt's SQLite driver (QSQLITE) is not installed: install the package libqt6sql6-sqlite.</source>
        <translation>未安装 Qt 的 SQLite 驱动（QSQLITE）：请安装软件包 libqt6sql6-sqlite。</translation>
    </message>
    <message>
        <source>Cannot create the folder %1 for the event journal: check its permissions and that the disk is not full.</source>
        <translation>无法为事件日志创建文件夹 %1：请检查其权限，以及磁盘是否已满。</translation>
    </message>
    <message>
        <source>The event journal %1 cannot be written: give your user write permission on it%2.</source>
        <translation>无法写入事件日志 %1：请授予您的用户对该文件%2的写入权限。</translation>
    </message>
    <message>
        <source> and its folder</source>
        <translation> 及其所在文件夹</translation>
    </message>
    <message>
        <source>Cannot create the event journal %1: %2.</source>
        <translation>无法创建事件日志 %1：%2。</translation>
    </message>
    <message>
        <source>The event journal %1 is damaged and could not be moved aside: move or delete it, and Starforge starts a new one.</source>
        <translation>事件日志 %1 已损坏，且无法移到一旁：请移动或删除它，Starforge 会新建一个。</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::CapacityHeatmapView</name>
    <message>
        <source>GPU capacity heatmap</source>
        <translation>GPU 容量热力图</translation>
    </message>
    <message>
        <source>One cell per node, one band per GPU series; colour is GPUs in use over allocatable. Arrow keys move between nodes, Enter lists the node's pods, + and - zoom.</source>
        <translation>每个节点一个单元格，每个 GPU 系列一个条带；颜色表示已用 GPU 占可分配 GPU 的比例。方向键在节点间移动，Enter 列出该节点的 Pod，+ 和 - 缩放。</translation>
    </message>
    <message>
        <source>%1 · 1 node</source>
        <translation>%1 · 1 个节点</translation>
    </message>
    <message>
        <source>%1 · %2 nodes</source>
        <translation>%1 · %2 个节点</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::CapacityLegend</name>
    <message>
        <source>Heatmap legend</source>
        <translation>热力图图例</translation>
    </message>
    <message>
        <source>Colour is GPUs in use over allocatable, from dark violet (none in use) through teal and green to yellow (all in use). Hatched cells are blocked nodes: cordoned, not ready, or tainted. Grey cells are nodes without GPUs.</source>
        <translation>颜色表示已用 GPU 占可分配 GPU 的比例，从深紫色（未使用）经青色和绿色到黄色（全部使用）。带斜线的单元格是受阻节点：已封锁、未就绪或有污点。灰色单元格是没有 GPU 的节点。</translation>
    </message>
    <message>
        <source>GPUs in use</source>
        <translation>已用 GPU</translation>
    </message>
    <message>
        <source>blocked</source>
        <translation>受阻</translation>
    </message>
    <message>
        <source>no GPUs</source>
        <translation>无 GPU</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::CapacityPanel</name>
    <message>
        <source>&amp;Series:</source>
        <translation>系列(&amp;S)：</translation>
    </message>
    <message>
        <source>Series shown</source>
        <translation>显示的系列</translation>
    </message>
    <message>
        <source>Show every GPU series or one</source>
        <translation>显示全部 GPU 系列或其中之一</translation>
    </message>
    <message>
        <source>All series</source>
        <translation>全部系列</translation>
    </message>
    <message>
        <source>Zoom out</source>
        <translation>缩小</translation>
    </message>
    <message>
        <source>Smaller cells (- or Ctrl+wheel down)</source>
        <translation>更小的单元格（- 或 Ctrl+滚轮向下）</translation>
    </message>
    <message>
        <source>Zoom in</source>
        <translation>放大</translation>
    </message>
    <message>
        <source>Larger cells (+ or Ctrl+wheel up)</source>
        <translation>更大的单元格（+ 或 Ctrl+滚轮向上）</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>适应</translation>
    </message>
    <message>
        <source>Fit all nodes</source>
        <translation>适应全部节点</translation>
    </message>
    <message>
        <source>The largest cells at which every node shows</source>
        <translation>能显示全部节点的最大单元格</translation>
    </message>
    <message>
        <source>GPU series totals</source>
        <translation>GPU 系列合计</translation>
    </message>
    <message>
        <source>Click a node, or press Enter on it, to list its pods.</source>
        <translation>单击节点或在节点上按 Enter，即可列出其 Pod。</translation>
    </message>
    <message>
        <source>Pods on the selected node</source>
        <translation>所选节点上的 Pod</translation>
    </message>
    <message>
        <source>The capacity heatmap appears once the window is connected to a cluster.</source>
        <translation>窗口连接到集群后即显示容量热力图。</translation>
    </message>
    <message>
        <source>The capacity heatmap is off for this connection: %1</source>
        <translation>此连接的容量热力图已关闭：%1</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <source>Node %1 is no longer in the cluster.</source>
        <translation>节点 %1 已不在集群中。</translation>
    </message>
    <message>
        <source>Pods on %1: %2 of %3 GPUs in use</source>
        <translation>%1 上的 Pod：%3 个 GPU 中已用 %2 个</translation>
    </message>
    <message>
        <source>; blocked: %1</source>
        <translation>；受阻：%1</translation>
    </message>
    <message>
        <source>No pods</source>
        <translation>无 Pod</translation>
    </message>
    <message>
        <source>%1 px cells</source>
        <translation>%1 px 单元格</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ChatPane</name>
    <message>
        <source>Model to chat with</source>
        <translation>要聊天的模型</translation>
    </message>
    <message>
        <source>The playground pod this conversation talks to</source>
        <translation>此对话所连接的试验场 Pod</translation>
    </message>
    <message>
        <source>Chat status</source>
        <translation>聊天状态</translation>
    </message>
    <message>
        <source>vLLM metrics</source>
        <translation>vLLM 指标</translation>
    </message>
    <message>
        <source>&amp;Model:</source>
        <translation>模型(&amp;M)：</translation>
    </message>
    <message>
        <source>Not connected to a cluster.</source>
        <translation>未连接到集群。</translation>
    </message>
    <message>
        <source>Launch a model above, or choose one, to chat with it.</source>
        <translation>在上方启动一个模型或选择一个模型，即可与之聊天。</translation>
    </message>
    <message>
        <source>The pod %1 is gone; choose another model.</source>
        <translation>Pod %1 已不存在；请选择其他模型。</translation>
    </message>
    <message>
        <source>The pod %1 has ended (%2); launch it again to chat.</source>
        <translation>Pod %1 已结束（%2）；请重新启动它以继续聊天。</translation>
    </message>
    <message>
        <source>%1 is not ready yet (%2); the model loads before it answers.</source>
        <translation>%1 尚未就绪（%2）；模型加载完成后才会应答。</translation>
    </message>
    <message>
        <source>The conversation could not be saved: %1</source>
        <translation>无法保存对话：%1</translation>
    </message>
    <message>
        <source>no conversation store</source>
        <translation>没有对话存储</translation>
    </message>
    <message>
        <source>Reopened. Its pod %1 is gone: choose a model to continue the conversation with.</source>
        <translation>已重新打开。其 Pod %1 已不存在：请选择一个模型以继续此对话。</translation>
    </message>
    <message>
        <source>read %1's metrics</source>
        <translation>读取 %1 的指标</translation>
    </message>
    <message>
        <source>Metrics: %1</source>
        <translation>指标：%1</translation>
    </message>
    <message>
        <source>Metrics: the pod's /metrics has no vLLM series.</source>
        <translation>指标：该 Pod 的 /metrics 中没有 vLLM 指标。</translation>
    </message>
    <message>
        <source>%1 running · %2 waiting · KV cache %3% · %4 tokens generated</source>
        <translation>%1 个运行中 · %2 个等待中 · KV 缓存 %3% · 已生成 %4 个 token</translation>
    </message>
    <message>
        <source> · mean first token %1 ms</source>
        <translation> · 平均首 token 延迟 %1 ms</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::CodePage</name>
    <message>
        <source>Br&amp;owse…</source>
        <translation>浏览(&amp;O)…</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>代码</translation>
    </message>
    <message>
        <source>The folder that becomes the job's Capsule, and the job's name.</source>
        <translation>将成为作业 Capsule 的文件夹，以及作业名称。</translation>
    </message>
    <message>
        <source>Code folder</source>
        <translation>代码文件夹</translation>
    </message>
    <message>
        <source>Browse for the code folder</source>
        <translation>浏览代码文件夹</translation>
    </message>
    <message>
        <source>Job name</source>
        <translation>作业名称</translation>
    </message>
    <message>
        <source>Exclude patterns</source>
        <translation>排除模式</translation>
    </message>
    <message>
        <source>gitignore patterns, separated by spaces, e.g. data/raw/ *.ipynb</source>
        <translation>gitignore 模式，以空格分隔，例如 data/raw/ *.ipynb</translation>
    </message>
    <message>
        <source>Files of the code folder</source>
        <translation>代码文件夹中的文件</translation>
    </message>
    <message>
        <source>Capsule estimate</source>
        <translation>Capsule 估算</translation>
    </message>
    <message>
        <source>Code &amp;folder:</source>
        <translation>代码文件夹(&amp;F)：</translation>
    </message>
    <message>
        <source>Job na&amp;me:</source>
        <translation>作业名称(&amp;M)：</translation>
    </message>
    <message>
        <source>E&amp;xcludes:</source>
        <translation>排除(&amp;X)：</translation>
    </message>
    <message>
        <source>File&amp;s (greyed: left out of the Capsule, with the pattern that drops them):</source>
        <translation>文件(&amp;S)（灰色：未纳入 Capsule 的文件，并注明排除它们的模式）：</translation>
    </message>
    <message>
        <source>Capsule: %1 files, about %2 before compression (code, jobspec.json, manifest.json and runner.pex); %3 left out.</source>
        <translation>Capsule：%1 个文件，压缩前约 %2（代码、jobspec.json、manifest.json 和 runner.pex）；%3 个未纳入。</translation>
    </message>
    <message>
        <source>code: choose the folder with your training code (Browse…).</source>
        <translation>代码：请选择训练代码所在的文件夹（浏览…）。</translation>
    </message>
    <message>
        <source>code: the folder %1 does not exist; choose the folder with your training code.</source>
        <translation>代码：文件夹 %1 不存在；请选择训练代码所在的文件夹。</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ComparePlot</name>
    <message>
        <source>Runs compared</source>
        <translation>比较的运行</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>No runs.</source>
        <translation>没有运行。</translation>
    </message>
    <message>
        <source>the step</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>the wall time</source>
        <translation>墙钟时间</translation>
    </message>
    <message>
        <source>%1 has no %2</source>
        <translation>%1 没有%2</translation>
    </message>
    <message>
        <source>%1 ends at %2 after %3 points</source>
        <translation>%1 在 %3 个点后止于 %2</translation>
    </message>
    <message>
        <source>%1 against %2%3: %4.</source>
        <translation>%1 相对于%2%3：%4。</translation>
    </message>
    <message>
        <source> (log scale)</source>
        <translation> (对数刻度)</translation>
    </message>
    <message>
        <source> At the cursor: %1.</source>
        <translation> 光标处：%1。</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>wall time (s)</source>
        <translation>墙钟时间（秒）</translation>
    </message>
    <message>
        <source>at %1: %2</source>
        <translation>在 %1 处：%2</translation>
    </message>
    <message>
        <source>%1 points of zero or below left out on the log scale</source>
        <translation>对数刻度下略去了 %1 个小于或等于零的点</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::CompareWindow</name>
    <message>
        <source>&amp;Log scale</source>
        <translation>对数刻度(&amp;L)</translation>
    </message>
    <message numerus="yes">
        <source>Compare %n run(s)</source>
        <translation>
            <numerusform>比较 %n 次运行</numerusform>
        </translation>
    </message>
    <message>
        <source>Metric</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>Against</source>
        <translation>横轴</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>Wall time</source>
        <translation>墙钟时间</translation>
    </message>
    <message>
        <source>Comparison status</source>
        <translation>比较状态</translation>
    </message>
    <message>
        <source>Export &amp;CSV…</source>
        <translation>导出 CSV(&amp;C)…</translation>
    </message>
    <message>
        <source>Export &amp;PNG…</source>
        <translation>导出 PNG(&amp;P)…</translation>
    </message>
    <message>
        <source>&amp;Metric:</source>
        <translation>指标(&amp;M)：</translation>
    </message>
    <message>
        <source>&amp;Against:</source>
        <translation>横轴(&amp;A)：</translation>
    </message>
    <message>
        <source>Export the runs as CSV</source>
        <translation>将运行导出为 CSV</translation>
    </message>
    <message>
        <source>CSV (*.csv)</source>
        <translation>CSV (*.csv)</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Could not write %1.</source>
        <translation>无法写入 %1。</translation>
    </message>
    <message>
        <source>Export the plot as PNG</source>
        <translation>将图表导出为 PNG</translation>
    </message>
    <message>
        <source>PNG (*.png)</source>
        <translation>PNG (*.png)</translation>
    </message>
    <message>
        <source>%1 has printed no progress yet</source>
        <translation>%1 尚未输出任何进度</translation>
    </message>
    <message>
        <source>%1: no bucket to read its archived log from</source>
        <translation>%1：没有可读取其归档日志的存储桶</translation>
    </message>
    <message>
        <source>%1's archived driver log has no progress lines</source>
        <translation>%1 的已归档 driver 日志中没有进度行</translation>
    </message>
    <message numerus="yes">
        <source>Reading %n archived driver log(s)…</source>
        <translation>
            <numerusform>正在读取 %n 个已归档的 driver 日志…</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ConnectionTestDialog</name>
    <message>
        <source>checking…</source>
        <translation>正在检查…</translation>
    </message>
    <message>
        <source>OK</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>Warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Not tried</source>
        <translation>未尝试</translation>
    </message>
    <message>
        <source>&amp;Run again</source>
        <translation>重新运行(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Copy report</source>
        <translation>复制报告(&amp;C)</translation>
    </message>
    <message>
        <source>Test Connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <source>Connection checks</source>
        <translation>连接检查</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>检查项</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>耗时</translation>
    </message>
    <message>
        <source>Detail</source>
        <translation>详情</translation>
    </message>
    <message>
        <source>Selected check's detail</source>
        <translation>所选检查项的详情</translation>
    </message>
    <message>
        <source>Testing %1…</source>
        <translation>正在测试 %1…</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 ms</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>%1 works.</source>
        <translation>%1 工作正常。</translation>
    </message>
    <message>
        <source>%1 has a problem; select a part to see what to change.</source>
        <translation>%1 存在问题；选择一个部分以查看需要修改的内容。</translation>
    </message>
    <message>
        <source>Starforge connection test of %1: %2</source>
        <translation>Starforge 对 %1 的连接测试：%2</translation>
    </message>
    <message>
        <source> (%1 ms)</source>
        <translation> (%1 ms)</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::DesktopNotifier</name>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::EventsPanel</name>
    <message>
        <source>Select a job in the Jobs panel to see its events on a timeline here: what each of its objects went through, and why it waits.</source>
        <translation>在“作业”面板中选择一个作业，即可在此处的时间线上查看其事件：它的每个对象经历了什么，以及它为何在等待。</translation>
    </message>
    <message>
        <source>Job on the timeline</source>
        <translation>时间线上的作业</translation>
    </message>
    <message>
        <source>Why the job is pending</source>
        <translation>作业为何在等待</translation>
    </message>
    <message>
        <source>Filter events (reason, object, message)…</source>
        <translation>筛选事件（原因、对象、消息）…</translation>
    </message>
    <message>
        <source>Filter events</source>
        <translation>筛选事件</translation>
    </message>
    <message>
        <source>Zoom in (+)</source>
        <translation>放大 (+)</translation>
    </message>
    <message>
        <source>Zoom out (-)</source>
        <translation>缩小 (-)</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>适应</translation>
    </message>
    <message>
        <source>Fit the whole job (0)</source>
        <translation>适应整个作业 (0)</translation>
    </message>
    <message>
        <source>Events of the selected job</source>
        <translation>所选作业的事件</translation>
    </message>
    <message numerus="yes">
        <source>%1 — %2, %n event(s)</source>
        <translation>
            <numerusform>%1 — %2，%n 个事件</numerusform>
        </translation>
    </message>
    <message>
        <source>Why it is pending — %1: %2</source>
        <translation>为何在等待 — %1：%2</translation>
    </message>
    <message>
        <source>Why the job failed</source>
        <translation>作业失败的原因</translation>
    </message>
    <message>
        <source>Why it failed — %1: %2</source>
        <translation>失败原因 — %1：%2</translation>
    </message>
    <message numerus="yes">
        <source>Show the evidence (%n event(s))</source>
        <translation>
            <numerusform>显示依据（%n 个事件）</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::FirstRunPanel</name>
    <message>
        <source>&amp;Import from kubeconfig</source>
        <translation>从 kubeconfig 导入(&amp;I)</translation>
    </message>
    <message>
        <source>Use a context you already have with kubectl: its server, certificates and credentials.</source>
        <translation>使用您在 kubectl 中已有的上下文：其服务器、证书和凭据。</translation>
    </message>
    <message>
        <source>&amp;Enter a server</source>
        <translation>输入服务器(&amp;E)</translation>
    </message>
    <message>
        <source>Type the API server's URL and paste a token.</source>
        <translation>输入 API 服务器的 URL 并粘贴令牌。</translation>
    </message>
    <message>
        <source>&amp;Try the sandbox</source>
        <translation>试用沙盒(&amp;T)</translation>
    </message>
    <message>
        <source>A small cluster on this machine with GPU nodes, KubeRay and a bucket, to try everything first. It stops when the app quits.</source>
        <translation>在本机上运行的小型集群，带有 GPU 节点、KubeRay 和一个存储桶，可先试用所有功能。应用退出时它会停止。</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::JobDetailPanel</name>
    <message>
        <source>—</source>
        <translation>—</translation>
    </message>
    <message>
        <source>NeMo-RL's log directory: %1</source>
        <translation>NeMo-RL 的日志目录：%1</translation>
    </message>
    <message>
        <source>&amp;Chat with this checkpoint</source>
        <translation>与此检查点聊天(&amp;C)</translation>
    </message>
    <message>
        <source>Select a job in the Jobs panel to see its spec, status, pods and training progress here.</source>
        <translation>在“作业”面板中选择一个作业，即可在此处查看其规格、状态、Pod 和训练进度。</translation>
    </message>
    <message>
        <source>Selected job</source>
        <translation>所选作业</translation>
    </message>
    <message>
        <source>Why the job is pending</source>
        <translation>作业为何在等待</translation>
    </message>
    <message>
        <source>Job spec and status</source>
        <translation>作业规格和状态</translation>
    </message>
    <message>
        <source>Pods of the selected job</source>
        <translation>所选作业的 Pod</translation>
    </message>
    <message>
        <source>Metric to plot</source>
        <translation>要绘制的指标</translation>
    </message>
    <message>
        <source>The training metric the plot shows (from the runner's progress lines)</source>
        <translation>图表显示的训练指标（来自 runner 的进度行）</translation>
    </message>
    <message>
        <source>&amp;Metric:</source>
        <translation>指标(&amp;M)：</translation>
    </message>
    <message>
        <source>Training progress</source>
        <translation>训练进度</translation>
    </message>
    <message>
        <source>Finished checkpoints</source>
        <translation>已完成的检查点</translation>
    </message>
    <message>
        <source>Each finished step: whether vLLM can serve it as it is, or which NeMo-RL converter it needs</source>
        <translation>每个已完成的步：vLLM 能否直接部署它，或者它需要哪个 NeMo-RL 转换器</translation>
    </message>
    <message>
        <source>Copy path</source>
        <translation>复制路径</translation>
    </message>
    <message>
        <source>Serve the selected checkpoint with vLLM in the playground and chat with it</source>
        <translation>在试验场中用 vLLM 部署所选检查点并与之聊天</translation>
    </message>
    <message>
        <source>Why it is pending — %1: %2</source>
        <translation>为何在等待 — %1：%2</translation>
    </message>
    <message>
        <source>Why it failed — %1: %2</source>
        <translation>失败原因 — %1：%2</translation>
    </message>
    <message>
        <source>Why the job failed</source>
        <translation>作业失败的原因</translation>
    </message>
    <message>
        <source>Job id</source>
        <translation>作业 ID</translation>
    </message>
    <message>
        <source>Owner</source>
        <translation>所有者</translation>
    </message>
    <message>
        <source>Submitted</source>
        <translation>提交时间</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>开始时间</translation>
    </message>
    <message>
        <source>not yet</source>
        <translation>尚未开始</translation>
    </message>
    <message>
        <source>Ended</source>
        <translation>结束时间</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Spec</source>
        <translation>规格</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Recipe</source>
        <translation>配方</translation>
    </message>
    <message>
        <source>Config</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>Overrides</source>
        <translation>覆盖项</translation>
    </message>
    <message>
        <source>Pools</source>
        <translation>池</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>镜像</translation>
    </message>
    <message>
        <source>Secret %1</source>
        <translation>Secret %1</translation>
    </message>
    <message>
        <source>Env</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <source>Capsule</source>
        <translation>Capsule</translation>
    </message>
    <message>
        <source>RayJob %1</source>
        <translation>RayJob %1</translation>
    </message>
    <message>
        <source>Deployment</source>
        <translation>部署状态</translation>
    </message>
    <message>
        <source>(not set yet)</source>
        <translation>（尚未设置）</translation>
    </message>
    <message>
        <source>Ray job</source>
        <translation>Ray 作业</translation>
    </message>
    <message>
        <source>(not submitted yet)</source>
        <translation>（尚未提交）</translation>
    </message>
    <message>
        <source>Status since</source>
        <translation>状态开始于</translation>
    </message>
    <message>
        <source>Dashboard</source>
        <translation>仪表板</translation>
    </message>
    <message>
        <source>Failed attempts</source>
        <translation>失败的尝试</translation>
    </message>
    <message>
        <source>RayCluster %1</source>
        <translation>RayCluster %1</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>正在启动</translation>
    </message>
    <message>
        <source>Workers ready</source>
        <translation>就绪的 worker</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source>Head pod</source>
        <translation>Head Pod</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>RayCluster</source>
        <translation>RayCluster</translation>
    </message>
    <message>
        <source>gone (its final state is in objects.json)</source>
        <translation>已不存在（其最终状态保存在 objects.json 中）</translation>
    </message>
    <message>
        <source>Archive</source>
        <translation>归档</translation>
    </message>
    <message>
        <source>Archived</source>
        <translation>归档时间</translation>
    </message>
    <message>
        <source>%1, under jobs/%2/ in the bucket</source>
        <translation>%1，位于存储桶中的 jobs/%2/ 下</translation>
    </message>
    <message>
        <source>%1: %2/%3 (%4)</source>
        <translation>%1: %2/%3 (%4)</translation>
    </message>
    <message>
        <source>Logs</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>Not archived</source>
        <translation>未归档</translation>
    </message>
    <message>
        <source>No progress yet: it is read from the driver's log while the job runs.</source>
        <translation>尚无进度：作业运行期间会从 driver 日志中读取进度。</translation>
    </message>
    <message>
        <source>The driver has not reported a step yet.</source>
        <translation>driver 尚未报告任何步。</translation>
    </message>
    <message>
        <source>&amp;Chat with step %1</source>
        <translation>与第 %1 步聊天(&amp;C)</translation>
    </message>
    <message>
        <source>Chat with the checkpoint of step %1 in the playground</source>
        <translation>在试验场中与第 %1 步的检查点聊天</translation>
    </message>
    <message>
        <source>Chat with this checkpoint</source>
        <translation>与此检查点聊天</translation>
    </message>
    <message>
        <source>The archive has no driver log to read progress from.</source>
        <translation>归档中没有可读取进度的 driver 日志。</translation>
    </message>
    <message>
        <source>The driver's log reports no training steps.</source>
        <translation>driver 日志中没有报告任何训练步。</translation>
    </message>
    <message>
        <source>Final: %1</source>
        <translation>最终：%1</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::JobsPanel</name>
    <message>
        <source>&amp;Stop</source>
        <translation>停止(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Refresh history</source>
        <translation>刷新历史(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Details</source>
        <translation>详情(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;Copy job id</source>
        <translation>复制作业 ID(&amp;C)</translation>
    </message>
    <message>
        <source>D&amp;elete…</source>
        <translation>删除(&amp;E)…</translation>
    </message>
    <message>
        <source>Res&amp;ubmit…</source>
        <translation>重新提交(&amp;U)…</translation>
    </message>
    <message>
        <source>Copy Ray&amp;Job</source>
        <translation>复制 RayJob(&amp;J)</translation>
    </message>
    <message>
        <source>Open e&amp;vents</source>
        <translation>打开事件(&amp;V)</translation>
    </message>
    <message>
        <source>Open &amp;logs</source>
        <translation>打开日志(&amp;L)</translation>
    </message>
    <message>
        <source>Co&amp;mpare runs…</source>
        <translation>比较运行(&amp;M)…</translation>
    </message>
    <message>
        <source>Stop the selected job: its logs and events are archived, then its RayJob is deleted</source>
        <translation>停止所选作业：先归档其日志和事件，然后删除其 RayJob</translation>
    </message>
    <message>
        <source>Read the job history from the bucket again</source>
        <translation>重新从存储桶读取作业历史</translation>
    </message>
    <message>
        <source>Show the selected job in the Job dock: spec, status, pods and training progress</source>
        <translation>在“作业”停靠窗口中显示所选作业：规格、状态、Pod 和训练进度</translation>
    </message>
    <message>
        <source>Open the submission wizard with this job's JobSpec</source>
        <translation>用此作业的 JobSpec 打开提交向导</translation>
    </message>
    <message>
        <source>Copy the job's RayJob as JSON: the cluster's, else the archived one</source>
        <translation>将作业的 RayJob 复制为 JSON：优先使用集群中的，否则使用已归档的</translation>
    </message>
    <message>
        <source>See the selected job's events on a timeline in the Events dock</source>
        <translation>在“事件”停靠窗口的时间线上查看所选作业的事件</translation>
    </message>
    <message>
        <source>Read the selected job's logs in the Logs dock</source>
        <translation>在“日志”停靠窗口中阅读所选作业的日志</translation>
    </message>
    <message>
        <source>More job actions</source>
        <translation>更多作业操作</translation>
    </message>
    <message>
        <source>Filter by id, name or message</source>
        <translation>按 ID、名称或消息筛选</translation>
    </message>
    <message>
        <source>Filter jobs</source>
        <translation>筛选作业</translation>
    </message>
    <message>
        <source>All</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Active</source>
        <translation>活动</translation>
    </message>
    <message>
        <source>Ended</source>
        <translation>已结束</translation>
    </message>
    <message>
        <source>Active: submitting, pending or running. Ended: succeeded, failed or stopped, archived or being archived.</source>
        <translation>活动：正在提交、等待中或运行中。已结束：已成功、已失败或已停止，已归档或正在归档。</translation>
    </message>
    <message>
        <source>Jobs</source>
        <translation>作业</translation>
    </message>
    <message>
        <source>Archived (Succeeded)</source>
        <translation>Archived (Succeeded)</translation>
    </message>
    <message>
        <source>Show:</source>
        <translation>显示：</translation>
    </message>
    <message>
        <source>Jobs shown</source>
        <translation>显示的作业</translation>
    </message>
    <message>
        <source>Overlay the selected jobs' training metrics on one plot (select several with Ctrl or Shift)</source>
        <translation>将所选作业的训练指标叠加到同一图表中（按住 Ctrl 或 Shift 可多选）</translation>
    </message>
    <message>
        <source>Job history: %1</source>
        <translation>作业历史：%1</translation>
    </message>
    <message>
        <source>Archived job records that could not be read: %1</source>
        <translation>无法读取的已归档作业记录：%1</translation>
    </message>
    <message>
        <source>Jobs appear here once the window is connected to a cluster.</source>
        <translation>窗口连接到集群后，作业将显示在此处。</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <source>Reconnecting…</source>
        <translation>正在重新连接…</translation>
    </message>
    <message>
        <source>Jobs appear here once the window is connected to a cluster (the status bar says why it is not).</source>
        <translation>窗口连接到集群后，作业将显示在此处（状态栏会说明尚未连接的原因）。</translation>
    </message>
    <message>
        <source>Job tracking and history need the profile's object storage. Set FORGE_S3_ENDPOINT, FORGE_S3_BUCKET, FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY in File › Connection Profiles (the keys are kept in the keychain), or in the environment.

%1</source>
        <translation>作业跟踪和历史需要配置文件中的对象存储。请在“文件 › 连接配置”中（密钥保存在钥匙串中）或在环境变量中设置 FORGE_S3_ENDPOINT、FORGE_S3_BUCKET、FORGE_S3_ACCESS_KEY 和 FORGE_S3_SECRET_KEY。

%1</translation>
    </message>
    <message>
        <source>Could not archive job %1 (its RayJob is kept; trying again later): %2</source>
        <translation>无法归档作业 %1（其 RayJob 已保留，稍后重试）：%2</translation>
    </message>
    <message>
        <source>Delete the selected job for good: its RayJob, its logs and events in the bucket (Delete)</source>
        <translation>永久删除所选作业：其 RayJob，以及存储桶中的日志和事件（Delete）</translation>
    </message>
    <message>
        <source>Reading the job history…</source>
        <translation>正在读取作业历史…</translation>
    </message>
    <message>
        <source>No jobs yet: File › New Job (Ctrl+N) submits one, as does starforge-cli submit SPEC</source>
        <translation>尚无作业：可通过“文件 › 新建作业”（Ctrl+N）或 starforge-cli submit SPEC 提交作业</translation>
    </message>
    <message>
        <source>1 job</source>
        <translation>1 个作业</translation>
    </message>
    <message>
        <source>%1 jobs</source>
        <translation>%1 个作业</translation>
    </message>
    <message>
        <source>: %1 active, %2 ended</source>
        <translation>：%1 个活动，%2 个已结束</translation>
    </message>
    <message>
        <source>%1 shown</source>
        <translation>显示 %1 个</translation>
    </message>
    <message>
        <source>reading the history…</source>
        <translation>正在读取历史…</translation>
    </message>
    <message>
        <source>not following live jobs</source>
        <translation>未跟踪运行中的作业</translation>
    </message>
    <message>
        <source>Stop job</source>
        <translation>停止作业</translation>
    </message>
    <message>
        <source>Stop job %1 (%2)?

Its logs and events are archived to the bucket first; then its RayJob is deleted and Ray stops the job. This cannot be undone.</source>
        <translation>要停止作业 %1（%2）吗？

会先将其日志和事件归档到存储桶，然后删除其 RayJob，Ray 随即停止该作业。此操作无法撤销。</translation>
    </message>
    <message>
        <source>Stopping job %1: archiving its logs and events…</source>
        <translation>正在停止作业 %1：正在归档其日志和事件…</translation>
    </message>
    <message>
        <source>Could not stop job %1: %2</source>
        <translation>无法停止作业 %1：%2</translation>
    </message>
    <message>
        <source>Job %1 %2; its logs and events are under jobs/%1/ in the bucket.</source>
        <translation>作业 %1 状态为 %2；其日志和事件位于存储桶中的 jobs/%1/ 下。</translation>
    </message>
    <message>
        <source>Delete job</source>
        <translation>删除作业</translation>
    </message>
    <message>
        <source>Delete job %1 (%2) for good?

Its RayJob, if it still runs, is deleted without an archive, and its logs, events and record are removed from the bucket. This cannot be undone.</source>
        <translation>要永久删除作业 %1（%2）吗？

如果其 RayJob 仍在运行，将不经归档直接删除，其日志、事件和记录也会从存储桶中移除。此操作无法撤销。</translation>
    </message>
    <message>
        <source>Deleting job %1…</source>
        <translation>正在删除作业 %1…</translation>
    </message>
    <message>
        <source>Could not delete job %1: %2</source>
        <translation>无法删除作业 %1：%2</translation>
    </message>
    <message numerus="yes">
        <source>Job %1 deleted: %n archived object(s) removed.</source>
        <translation>
            <numerusform>作业 %1 已删除：已移除 %n 个归档对象。</numerusform>
        </translation>
    </message>
    <message>
        <source>The RayJob of job %1 is on the clipboard.</source>
        <translation>作业 %1 的 RayJob 已复制到剪贴板。</translation>
    </message>
    <message>
        <source>Job %1 has no RayJob on the cluster and there is no bucket to read its archive from.</source>
        <translation>作业 %1 在集群上没有 RayJob，也没有可读取其归档的存储桶。</translation>
    </message>
    <message>
        <source>Job %1's RayJob is neither on the cluster nor in its archive.</source>
        <translation>作业 %1 的 RayJob 既不在集群上，也不在其归档中。</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::JobsTray</name>
    <message>
        <source>Starforge: no active jobs</source>
        <translation>Starforge：没有活动作业</translation>
    </message>
    <message numerus="yes">
        <source>Starforge: %n active job(s)</source>
        <translation>
            <numerusform>Starforge：%n 个活动作业</numerusform>
        </translation>
    </message>
    <message>
        <source>No active jobs</source>
        <translation>没有活动作业</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>&amp;Show Starforge</source>
        <translation>显示 Starforge(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::LaunchDialog</name>
    <message>
        <source>Launch a model</source>
        <translation>启动模型</translation>
    </message>
    <message>
        <source>Qwen/Qwen3-0.6B, or a checkpoint under %1</source>
        <translation>Qwen/Qwen3-0.6B，或 %1 下的检查点</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>A model name, or the path of a checkpoint with Hugging Face weights under the storage root</source>
        <translation>模型名称，或存储根目录下带有 Hugging Face 权重的检查点路径</translation>
    </message>
    <message>
        <source>the model's own</source>
        <translation>模型自带的</translation>
    </message>
    <message>
        <source>Tokenizer</source>
        <translation>分词器</translation>
    </message>
    <message>
        <source>GPU series</source>
        <translation>GPU 系列</translation>
    </message>
    <message>
        <source>GPUs (tensor parallel size)</source>
        <translation>GPU 数（张量并行大小）</translation>
    </message>
    <message>
        <source> h</source>
        <translation> 小时</translation>
    </message>
    <message>
        <source>Time to live in hours</source>
        <translation>存活时间（小时）</translation>
    </message>
    <message>
        <source>The cluster ends the pod after this long, even if Starforge is closed.</source>
        <translation>到时后集群会结束该 Pod，即使 Starforge 已关闭。</translation>
    </message>
    <message>
        <source>Maximum context length in tokens</source>
        <translation>最大上下文长度（token 数）</translation>
    </message>
    <message>
        <source>What to fix before launching</source>
        <translation>启动前需要修正的内容</translation>
    </message>
    <message>
        <source>&amp;Launch</source>
        <translation>启动(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Model:</source>
        <translation>模型(&amp;M)：</translation>
    </message>
    <message>
        <source>&amp;Tokenizer:</source>
        <translation>分词器(&amp;T)：</translation>
    </message>
    <message>
        <source>GPU &amp;series:</source>
        <translation>GPU 系列(&amp;S)：</translation>
    </message>
    <message>
        <source>&amp;GPUs:</source>
        <translation>GPU 数(&amp;G)：</translation>
    </message>
    <message>
        <source>Time to l&amp;ive:</source>
        <translation>存活时间(&amp;I)：</translation>
    </message>
    <message>
        <source>Max &amp;context:</source>
        <translation>最大上下文(&amp;C)：</translation>
    </message>
    <message>
        <source>%1 (%2 of %3 GPUs free)</source>
        <translation>%1（%3 个 GPU 中有 %2 个空闲）</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::LogsPanel</name>
    <message>
        <source>F&amp;ollow</source>
        <translation>跟随(&amp;O)</translation>
    </message>
    <message>
        <source>Keep the newest line in view as the log grows</source>
        <translation>日志增长时始终显示最新的一行</translation>
    </message>
    <message>
        <source>First &amp;traceback</source>
        <translation>首个回溯(&amp;T)</translation>
    </message>
    <message>
        <source>Go to the first Python traceback</source>
        <translation>转到第一个 Python 回溯（traceback）</translation>
    </message>
    <message>
        <source>Sa&amp;ve…</source>
        <translation>保存(&amp;V)…</translation>
    </message>
    <message>
        <source>Save the log to a file</source>
        <translation>将日志保存到文件</translation>
    </message>
    <message>
        <source>&amp;Wrap lines</source>
        <translation>自动换行(&amp;W)</translation>
    </message>
    <message>
        <source>&amp;Copy</source>
        <translation>复制(&amp;C)</translation>
    </message>
    <message>
        <source>Re&amp;gex</source>
        <translation>正则(&amp;G)</translation>
    </message>
    <message>
        <source>The search is a regular expression (Perl syntax)</source>
        <translation>搜索内容为正则表达式（Perl 语法）</translation>
    </message>
    <message>
        <source>An&amp;y case</source>
        <translation>忽略大小写(&amp;Y)</translation>
    </message>
    <message>
        <source>Match upper and lower case alike</source>
        <translation>大小写视为相同</translation>
    </message>
    <message>
        <source>Only &amp;matching</source>
        <translation>仅匹配行(&amp;M)</translation>
    </message>
    <message>
        <source>Show only the lines that match the search</source>
        <translation>只显示与搜索匹配的行</translation>
    </message>
    <message>
        <source>Pre&amp;vious</source>
        <translation>上一个(&amp;V)</translation>
    </message>
    <message>
        <source>Previous match (Shift+F3)</source>
        <translation>上一个匹配（Shift+F3）</translation>
    </message>
    <message>
        <source>&amp;Next</source>
        <translation>下一个(&amp;N)</translation>
    </message>
    <message>
        <source>Next match (F3)</source>
        <translation>下一个匹配（F3）</translation>
    </message>
    <message>
        <source>Which log: the driver's (the submitter pod), the head's, a worker's, or an archived one</source>
        <translation>要查看的日志：driver 的（提交器 Pod）、head 的、某个 worker 的，或已归档的日志</translation>
    </message>
    <message>
        <source>&amp;Log:</source>
        <translation>日志(&amp;L)：</translation>
    </message>
    <message>
        <source>Search the log</source>
        <translation>搜索日志</translation>
    </message>
    <message>
        <source>Search (Ctrl+F)</source>
        <translation>搜索（Ctrl+F）</translation>
    </message>
    <message>
        <source>Log lines</source>
        <translation>日志行</translation>
    </message>
    <message>
        <source>Ctrl+C copies the selected lines; the context menu (Shift+F10) has Copy, Save and Wrap lines.</source>
        <translation>Ctrl+C 复制所选行；上下文菜单（Shift+F10）中有“复制”“保存”和“自动换行”。</translation>
    </message>
    <message>
        <source>Wrap long lines at the view's width instead of cutting them (Alt+W)</source>
        <translation>按视图宽度折行显示长行，而不是截断（Alt+W）</translation>
    </message>
    <message>
        <source>Wrap lines</source>
        <translation>自动换行</translation>
    </message>
    <message>
        <source>Wraps long lines at the view's width instead of cutting them (Alt+W)</source>
        <translation>按视图宽度折行显示长行，而不是截断（Alt+W）</translation>
    </message>
    <message>
        <source>Log lines menu</source>
        <translation>日志行菜单</translation>
    </message>
    <message>
        <source>&amp;Save…</source>
        <translation>保存(&amp;S)…</translation>
    </message>
    <message>
        <source>Log status</source>
        <translation>日志状态</translation>
    </message>
    <message>
        <source>Saved to %1.</source>
        <translation>已保存到 %1。</translation>
    </message>
    <message>
        <source>Select a job in the Jobs panel to read its logs.</source>
        <translation>在“作业”面板中选择一个作业以阅读其日志。</translation>
    </message>
    <message numerus="yes">
        <source>Copied the first %n line(s) of the selection; Save… writes the whole log.</source>
        <translation>
            <numerusform>已复制所选内容的前 %n 行；“保存…”会写出完整日志。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Copied %n line(s).</source>
        <translation>
            <numerusform>已复制 %n 行。</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: %2/%3 (archived, %4)</source>
        <translation>%1: %2/%3（已归档，%4）</translation>
    </message>
    <message>
        <source>Job %1 was archived without logs.</source>
        <translation>作业 %1 归档时没有日志。</translation>
    </message>
    <message>
        <source>Finding the pods of job %1…</source>
        <translation>正在查找作业 %1 的 Pod…</translation>
    </message>
    <message>
        <source>%1: %2/%3</source>
        <translation>%1: %2/%3</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>%1 (previous container)</source>
        <translation>%1（上一个容器）</translation>
    </message>
    <message>
        <source>All pods (merged)</source>
        <translation>所有 Pod（合并）</translation>
    </message>
    <message>
        <source>Job %1 has no pods yet.</source>
        <translation>作业 %1 尚无 Pod。</translation>
    </message>
    <message>
        <source>Cannot make a file for the log: %1.</source>
        <translation>无法为日志创建文件：%1。</translation>
    </message>
    <message>
        <source>Downloading the archived log…</source>
        <translation>正在下载已归档的日志…</translation>
    </message>
    <message>
        <source>The log stream was interrupted (%1); reconnecting without losing or repeating a line.</source>
        <translation>日志流中断（%1）；正在重新连接，不会丢失或重复任何行。</translation>
    </message>
    <message numerus="yes">
        <source>%n line(s)</source>
        <translation>
            <numerusform>%n 行</numerusform>
        </translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation>正在搜索…</translation>
    </message>
    <message numerus="yes">
        <source>%n matching line(s)</source>
        <translation>
            <numerusform>%n 个匹配行</numerusform>
        </translation>
    </message>
    <message>
        <source>Searching… %1 %</source>
        <translation>正在搜索… %1 %</translation>
    </message>
    <message>
        <source>No traceback in this log.</source>
        <translation>此日志中没有回溯（traceback）。</translation>
    </message>
    <message>
        <source>There is no log to save.</source>
        <translation>没有可保存的日志。</translation>
    </message>
    <message>
        <source>Cannot save the log to %1; choose another folder.</source>
        <translation>无法将日志保存到 %1；请选择其他文件夹。</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::MainWindow</name>
    <message>
        <source>Set up a connection…</source>
        <translation>设置连接…</translation>
    </message>
    <message>
        <source>The connection profile the window works with</source>
        <translation>窗口所使用的连接配置</translation>
    </message>
    <message>
        <source>Connection profile</source>
        <translation>连接配置</translation>
    </message>
    <message>
        <source>Profile: </source>
        <translation>配置文件： </translation>
    </message>
    <message>
        <source>More tools</source>
        <translation>更多工具</translation>
    </message>
    <message>
        <source>TLS verification is off</source>
        <translation>TLS 验证已关闭</translation>
    </message>
    <message>
        <source>FORGE_K8S_INSECURE_SKIP_TLS_VERIFY is on: anyone on the network path can read and change what the app sends, including the token. Use it only with throw-away clusters.</source>
        <translation>FORGE_K8S_INSECURE_SKIP_TLS_VERIFY 已开启：网络路径上的任何人都能读取和篡改应用发送的内容，包括令牌。仅可用于临时集群。</translation>
    </message>
    <message>
        <source>Desktop &amp;Notifications</source>
        <translation>桌面通知(&amp;N)</translation>
    </message>
    <message>
        <source>Tell me when a job of mine ends or a playground pod is about to stop, while I look elsewhere</source>
        <translation>当我的作业结束或试验场 Pod 即将停止时，如果我正在看别处，就通知我</translation>
    </message>
    <message>
        <source>Show in System &amp;Tray</source>
        <translation>在系统托盘中显示(&amp;T)</translation>
    </message>
    <message>
        <source>An icon with the count of active jobs; closing the window keeps following them, so their logs are archived</source>
        <translation>显示活动作业数量的图标；关闭窗口后仍会继续跟踪这些作业，以便归档其日志</translation>
    </message>
    <message>
        <source>&amp;Appearance</source>
        <translation>外观(&amp;A)</translation>
    </message>
    <message>
        <source>As the &amp;System Says</source>
        <translation>跟随系统(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Light</source>
        <translation>浅色(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Dark</source>
        <translation>深色(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>Starforge speaks the new language from its next start.</source>
        <translation>Starforge 将在下次启动时使用新语言。</translation>
    </message>
    <message>
        <source>%1 stops in %2 min</source>
        <translation>%1 将在 %2 分钟后停止</translation>
    </message>
    <message>
        <source>The playground pod %1 reaches its time to live; Extend in the Playground launches a new one.</source>
        <translation>试验场 Pod %1 即将到达其存活时间；在“试验场”中点击“延长”可启动一个新的 Pod。</translation>
    </message>
    <message>
        <source>Open JobSpec</source>
        <translation>打开 JobSpec</translation>
    </message>
    <message>
        <source>Cannot resubmit: the job's JobSpec does not read: %1</source>
        <translation>无法重新提交：无法读取该作业的 JobSpec：%1</translation>
    </message>
    <message>
        <source>Resubmit %1: choose its code folder; this machine has not submitted it before.</source>
        <translation>重新提交 %1：请选择其代码文件夹；本机此前未提交过该作业。</translation>
    </message>
    <message>
        <source>Starforge is still running</source>
        <translation>Starforge 仍在运行</translation>
    </message>
    <message>
        <source>It follows your jobs from the tray; Quit in the tray's menu ends it.</source>
        <translation>它会在托盘中继续跟踪您的作业；在托盘菜单中选择“退出”即可结束它。</translation>
    </message>
    <message>
        <source>Jobs</source>
        <translation>作业</translation>
    </message>
    <message>
        <source>GPU Capacity</source>
        <translation>GPU 容量</translation>
    </message>
    <message>
        <source>Playground</source>
        <translation>试验场</translation>
    </message>
    <message>
        <source>Job</source>
        <translation>作业</translation>
    </message>
    <message>
        <source>Events</source>
        <translation>事件</translation>
    </message>
    <message>
        <source>Logs</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>Go to %1</source>
        <translation>转到%1</translation>
    </message>
    <message>
        <source>(no profiles)</source>
        <translation>（无配置文件）</translation>
    </message>
    <message>
        <source>(none active)</source>
        <translation>（无活动配置）</translation>
    </message>
    <message>
        <source>Not connected: no connection profile yet</source>
        <translation>未连接：尚无连接配置</translation>
    </message>
    <message>
        <source>Not connected: no profile is active</source>
        <translation>未连接：没有活动的配置文件</translation>
    </message>
    <message>
        <source>Not connected: %1</source>
        <translation>未连接：%1</translation>
    </message>
    <message>
        <source>Not connected: the profile has no API server (FORGE_K8S_API_SERVER)</source>
        <translation>未连接：配置文件中没有 API 服务器（FORGE_K8S_API_SERVER）</translation>
    </message>
    <message>
        <source>Profile: %1</source>
        <translation>配置文件：%1</translation>
    </message>
    <message>
        <source>Sandbox (until the app quits)</source>
        <translation>沙盒（直到应用退出）</translation>
    </message>
    <message>
        <source>Profile: none</source>
        <translation>配置文件：无</translation>
    </message>
    <message>
        <source>%1:
%2</source>
        <translation>%1:
%2</translation>
    </message>
    <message>
        <source>Role rules that would allow the missing features:

%1</source>
        <translation>可启用缺失功能的 Role 规则：

%1</translation>
    </message>
    <message>
        <source>%1 — Starforge</source>
        <translation>%1 — Starforge</translation>
    </message>
    <message>
        <source>Sandbox — Starforge</source>
        <translation>沙盒 — Starforge</translation>
    </message>
    <message>
        <source>Starforge</source>
        <translation>Starforge</translation>
    </message>
    <message>
        <source>&lt;h2&gt;Welcome to Starforge&lt;/h2&gt;&lt;p&gt;Run NeMo-RL training on Kubernetes and KubeRay from here.&lt;/p&gt;&lt;p&gt;Choose how to connect:&lt;/p&gt;</source>
        <translation>&lt;h2&gt;欢迎使用 Starforge&lt;/h2&gt;&lt;p&gt;在这里即可于 Kubernetes 和 KubeRay 上运行 NeMo-RL 训练。&lt;/p&gt;&lt;p&gt;请选择连接方式：&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;h2&gt;%1&lt;/h2&gt;&lt;p&gt;%2&lt;/p&gt;</source>
        <translation>&lt;h2&gt;%1&lt;/h2&gt;&lt;p&gt;%2&lt;/p&gt;</translation>
    </message>
    <message>
        <source>No active profile</source>
        <translation>没有活动的配置文件</translation>
    </message>
    <message>
        <source>Connection profiles…</source>
        <translation>连接配置…</translation>
    </message>
    <message>
        <source>A job is being prepared in the open wizard; submit or cancel it first.</source>
        <translation>已打开的向导中正在准备一个作业；请先提交或取消它。</translation>
    </message>
    <message>
        <source>Job %1 submitted</source>
        <translation>作业 %1 已提交</translation>
    </message>
    <message>
        <source>Saving profile %1…</source>
        <translation>正在保存配置文件 %1…</translation>
    </message>
    <message>
        <source>Starting the sandbox cluster…</source>
        <translation>正在启动沙盒集群…</translation>
    </message>
    <message>
        <source>The sandbox is running; kubectl reaches it with KUBECONFIG=%1</source>
        <translation>沙盒正在运行；kubectl 可通过 KUBECONFIG=%1 访问它</translation>
    </message>
    <message>
        <source>The sandbox did not start: %1</source>
        <translation>沙盒未能启动：%1</translation>
    </message>
    <message>
        <source>About Starforge</source>
        <translation>关于 Starforge</translation>
    </message>
    <message>
        <source>Starforge Desktop %1

Run NeMo-RL training on Kubernetes and KubeRay from the desktop.
Qt %2.</source>
        <translation>Starforge Desktop %1

从桌面在 Kubernetes 和 KubeRay 上运行 NeMo-RL 训练。
Qt %2。</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::MatchScrollBar</name>
    <message>
        <source>Log position and match overview</source>
        <translation>日志位置和匹配概览</translation>
    </message>
    <message>
        <source>Scrolls the log. No search matches are marked.</source>
        <translation>滚动日志。没有标记任何搜索匹配。</translation>
    </message>
    <message numerus="yes">
        <source>Scrolls the log. %n search match(es) are marked along it; F3 and Shift+F3 go to them.</source>
        <translation>
            <numerusform>滚动日志。其上标记了 %n 个搜索匹配；按 F3 和 Shift+F3 可跳转到这些匹配。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::MessageCard</name>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <source>…</source>
        <translation>…</translation>
    </message>
    <message>
        <source>Your message</source>
        <translation>您的消息</translation>
    </message>
    <message>
        <source>Reply from %1</source>
        <translation>来自 %1 的回复</translation>
    </message>
    <message>
        <source>Reply from %1%2</source>
        <translation>来自 %1 的回复%2</translation>
    </message>
    <message>
        <source>, still writing</source>
        <translation>，仍在生成</translation>
    </message>
    <message>
        <source>Copy your message</source>
        <translation>复制您的消息</translation>
    </message>
    <message>
        <source>Copy the reply</source>
        <translation>复制回复</translation>
    </message>
    <message>
        <source>Edit this message and send it again</source>
        <translation>编辑此消息并重新发送</translation>
    </message>
    <message>
        <source>Copy code</source>
        <translation>复制代码</translation>
    </message>
    <message>
        <source>Copy code %1</source>
        <translation>复制代码 %1</translation>
    </message>
    <message>
        <source>Copy code block %1</source>
        <translation>复制代码块 %1</translation>
    </message>
    <message>
        <source>Copy code block %1 (%2)</source>
        <translation>复制代码块 %1（%2）</translation>
    </message>
    <message>
        <source>Copies this block's code alone</source>
        <translation>仅复制此代码块中的代码</translation>
    </message>
    <message>
        <source>Copies this %1 block's code alone</source>
        <translation>仅复制此 %1 代码块中的代码</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::NewConnectionDialog</name>
    <message>
        <source>Connect to a Cluster</source>
        <translation>连接到集群</translation>
    </message>
    <message>
        <source>The API server and a token are enough to start. Everything else has a default you can change later under Connection Profiles.</source>
        <translation>只需 API 服务器和令牌即可开始。其他各项都有默认值，之后可在“连接配置”中修改。</translation>
    </message>
    <message>
        <source>kept in the OS keychain only</source>
        <translation>仅保存在操作系统钥匙串中</translation>
    </message>
    <message>
        <source>optional: for a private certificate authority</source>
        <translation>可选：用于私有证书颁发机构</translation>
    </message>
    <message>
        <source>…</source>
        <translation>…</translation>
    </message>
    <message>
        <source>Choose the CA file</source>
        <translation>选择 CA 文件</translation>
    </message>
    <message>
        <source>Profile &amp;name:</source>
        <translation>配置文件名称(&amp;N)：</translation>
    </message>
    <message>
        <source>&amp;API server:</source>
        <translation>API 服务器(&amp;A)：</translation>
    </message>
    <message>
        <source>&amp;Token:</source>
        <translation>令牌(&amp;T)：</translation>
    </message>
    <message>
        <source>Names&amp;pace:</source>
        <translation>命名空间(&amp;P)：</translation>
    </message>
    <message>
        <source>&amp;CA file:</source>
        <translation>CA 文件(&amp;C)：</translation>
    </message>
    <message>
        <source>CA file</source>
        <translation>CA 文件</translation>
    </message>
    <message>
        <source>C&amp;reate and Connect</source>
        <translation>创建并连接(&amp;R)</translation>
    </message>
    <message>
        <source>CA certificates (PEM)</source>
        <translation>CA 证书 (PEM)</translation>
    </message>
    <message>
        <source>PEM files (*.pem *.crt);;All files (*)</source>
        <translation>PEM 文件 (*.pem *.crt);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Profile name: %1</source>
        <translation>配置文件名称：%1</translation>
    </message>
    <message>
        <source>Profile name: a profile named %1 already exists.</source>
        <translation>配置文件名称：已存在名为 %1 的配置文件。</translation>
    </message>
    <message>
        <source>API server: enter its URL, e.g. https://api.example.com:6443.</source>
        <translation>API 服务器：请输入其 URL，例如 https://api.example.com:6443。</translation>
    </message>
    <message>
        <source>Token: paste a bearer token (kubectl create token NAME makes one).</source>
        <translation>令牌：请粘贴一个 bearer 令牌（可用 kubectl create token NAME 生成）。</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::PlaygroundPanel</name>
    <message>
        <source>&amp;Launch…</source>
        <translation>启动(&amp;L)…</translation>
    </message>
    <message>
        <source>Stop pod</source>
        <translation>停止 Pod</translation>
    </message>
    <message>
        <source>Exten&amp;d…</source>
        <translation>延长(&amp;D)…</translation>
    </message>
    <message>
        <source>&amp;New</source>
        <translation>新建(&amp;N)</translation>
    </message>
    <message>
        <source>E&amp;xport…</source>
        <translation>导出(&amp;X)…</translation>
    </message>
    <message>
        <source>C&amp;ompare two models</source>
        <translation>比较两个模型(&amp;O)</translation>
    </message>
    <message>
        <source>&amp;Send</source>
        <translation>发送(&amp;S)</translation>
    </message>
    <message>
        <source>S&amp;top</source>
        <translation>停止(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Regenerate</source>
        <translation>重新生成(&amp;R)</translation>
    </message>
    <message>
        <source>Playground pods</source>
        <translation>试验场 Pod</translation>
    </message>
    <message>
        <source>Your vLLM pods: the model each serves, its state and the time left before the cluster ends it</source>
        <translation>您的 vLLM Pod：每个 Pod 部署的模型、其状态，以及集群结束它之前的剩余时间</translation>
    </message>
    <message>
        <source>Serve a model or a checkpoint with vLLM on a GPU pod of your own</source>
        <translation>在您自己的 GPU Pod 上用 vLLM 部署模型或检查点</translation>
    </message>
    <message>
        <source>Delete the selected pod now; its GPUs are free again</source>
        <translation>立即删除所选 Pod；其 GPU 将重新空闲</translation>
    </message>
    <message>
        <source>More time for the selected model: a new pod serving it (a pod's deadline cannot be raised)</source>
        <translation>为所选模型延长时间：启动一个部署该模型的新 Pod（Pod 的截止时间无法延后）</translation>
    </message>
    <message>
        <source>Why the pod is not ready</source>
        <translation>Pod 为何尚未就绪</translation>
    </message>
    <message>
        <source>Playground status</source>
        <translation>试验场状态</translation>
    </message>
    <message>
        <source>System prompt (optional)</source>
        <translation>系统提示词（可选）</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Maximum tokens per reply</source>
        <translation>每次回复的最大 token 数</translation>
    </message>
    <message>
        <source>T&amp;emperature:</source>
        <translation>温度(&amp;E)：</translation>
    </message>
    <message>
        <source>Top-&amp;p:</source>
        <translation>Top-p(&amp;P)：</translation>
    </message>
    <message>
        <source>Max to&amp;kens:</source>
        <translation>最大 token 数(&amp;K)：</translation>
    </message>
    <message>
        <source>Generation settings</source>
        <translation>生成设置</translation>
    </message>
    <message>
        <source>Saved conversations</source>
        <translation>已保存的对话</translation>
    </message>
    <message>
        <source>Reopen a conversation kept on this machine</source>
        <translation>重新打开保存在本机上的对话</translation>
    </message>
    <message>
        <source>Start a new conversation (the current one stays saved)</source>
        <translation>开始新对话（当前对话会保留）</translation>
    </message>
    <message>
        <source>Save the conversation as Markdown or JSON, with the model, settings and timings</source>
        <translation>将对话保存为 Markdown 或 JSON，包含模型、设置和耗时</translation>
    </message>
    <message>
        <source>Two models side by side: each prompt goes to both</source>
        <translation>两个模型并排：每条提示词会同时发给两者</translation>
    </message>
    <message>
        <source>&amp;History:</source>
        <translation>历史(&amp;H)：</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Message (Ctrl+Return sends, Esc stops)</source>
        <translation>消息（Ctrl+Return 发送，Esc 停止）</translation>
    </message>
    <message>
        <source>Send (Ctrl+Return)</source>
        <translation>发送（Ctrl+Return）</translation>
    </message>
    <message>
        <source>Stop the reply (Esc); vLLM stops generating</source>
        <translation>停止回复（Esc）；vLLM 将停止生成</translation>
    </message>
    <message>
        <source>Ask again for the last reply</source>
        <translation>重新请求最后一条回复</translation>
    </message>
    <message>
        <source>Export the conversation</source>
        <translation>导出对话</translation>
    </message>
    <message>
        <source>Markdown (*.md);;JSON (*.json)</source>
        <translation>Markdown (*.md);;JSON (*.json)</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Could not write %1.</source>
        <translation>无法写入 %1。</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Connect to a cluster to launch models and chat with them.</source>
        <translation>连接到集群后即可启动模型并与之聊天。</translation>
    </message>
    <message>
        <source>The playground pods could not be listed: %1</source>
        <translation>无法列出试验场 Pod：%1</translation>
    </message>
    <message>
        <source>%1 is starting: vLLM loads the model before it answers.</source>
        <translation>%1 正在启动：vLLM 加载模型后才会应答。</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>Launch a model</source>
        <translation>启动模型</translation>
    </message>
    <message>
        <source>Connect to a cluster first.</source>
        <translation>请先连接到集群。</translation>
    </message>
    <message>
        <source>Launching %1…</source>
        <translation>正在启动 %1…</translation>
    </message>
    <message>
        <source>The model was not launched: %1</source>
        <translation>模型未能启动：%1</translation>
    </message>
    <message>
        <source>%1 launched as %2; it answers once vLLM has loaded the model.</source>
        <translation>%1 已作为 %2 启动；vLLM 加载模型后即可应答。</translation>
    </message>
    <message>
        <source>Delete %1 (%2) now? Its GPUs are freed; conversations with it stay saved.</source>
        <translation>要立即删除 %1（%2）吗？其 GPU 将被释放；与它的对话仍会保留。</translation>
    </message>
    <message>
        <source>%1 is stopping.</source>
        <translation>%1 正在停止。</translation>
    </message>
    <message>
        <source>Extend %1</source>
        <translation>延长 %1</translation>
    </message>
    <message>
        <source>Kubernetes lets a pod's deadline (activeDeadlineSeconds) only go down, so more time is a new pod serving the same model. Launch it, and stop %1 once the new one is ready; the conversation carries over by choosing the new pod as its model.</source>
        <translation>Kubernetes 只允许缩短 Pod 的截止时间（activeDeadlineSeconds），因此延长时间意味着启动一个部署同一模型的新 Pod。启动新 Pod，待其就绪后再停止 %1；将新 Pod 选为对话的模型即可延续对话。</translation>
    </message>
    <message>
        <source>Settings: temperature %1 · top-p %2 · %3 tokens at most</source>
        <translation>设置：温度 %1 · top-p %2 · 最多 %3 个 token</translation>
    </message>
    <message>
        <source> · system prompt</source>
        <translation> · 系统提示词</translation>
    </message>
    <message>
        <source>Edit message</source>
        <translation>编辑消息</translation>
    </message>
    <message>
        <source>The conversation continues from this message:</source>
        <translation>对话将从此消息继续：</translation>
    </message>
    <message>
        <source>%1 (damaged: cannot be read)</source>
        <translation>%1（已损坏：无法读取）</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>(empty)</source>
        <translation>（空）</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ProfilesDialog</name>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;%2</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;%2</translation>
    </message>
    <message>
        <source> — active</source>
        <translation> — 活动</translation>
    </message>
    <message>
        <source>Unapplied changes</source>
        <translation>未应用的更改</translation>
    </message>
    <message>
        <source>The changes to profile %1 have not been applied. Discard them?</source>
        <translation>对配置文件 %1 的更改尚未应用。要放弃这些更改吗？</translation>
    </message>
    <message>
        <source>The keychain could not be read: %1</source>
        <translation>无法读取钥匙串：%1</translation>
    </message>
    <message>
        <source>No profiles yet. Add one, or import a context from a kubeconfig file.</source>
        <translation>尚无配置文件。请添加一个，或从 kubeconfig 文件导入上下文。</translation>
    </message>
    <message>
        <source>Select a profile to see and edit its settings.</source>
        <translation>选择一个配置文件以查看和编辑其设置。</translation>
    </message>
    <message>
        <source>Select a setting to see what it means. Environment variables of the same name override the profile while they are set.</source>
        <translation>选择一个设置项以查看其含义。同名环境变量在设置期间会覆盖配置文件中的值。</translation>
    </message>
    <message>
        <source>Waiting for the keychain…</source>
        <translation>正在等待钥匙串…</translation>
    </message>
    <message>
        <source>A profile named %1 already exists; choose another name.</source>
        <translation>已存在名为 %1 的配置文件；请换一个名称。</translation>
    </message>
    <message>
        <source>Add profile</source>
        <translation>添加配置文件</translation>
    </message>
    <message>
        <source>Name of the new profile (letters, digits, '.', '_', '-'):</source>
        <translation>新配置文件的名称（字母、数字、'.'、'_'、'-'）：</translation>
    </message>
    <message>
        <source>Created profile %1. Set its API server and token to connect.</source>
        <translation>已创建配置文件 %1。设置其 API 服务器和令牌即可连接。</translation>
    </message>
    <message>
        <source>Duplicate profile</source>
        <translation>复制配置文件</translation>
    </message>
    <message>
        <source>Name of the copy of %1:</source>
        <translation>%1 副本的名称：</translation>
    </message>
    <message>
        <source>Duplicated %1 as %2, secrets included.</source>
        <translation>已将 %1 复制为 %2，包括机密项。</translation>
    </message>
    <message>
        <source>Rename profile</source>
        <translation>重命名配置文件</translation>
    </message>
    <message>
        <source>New name of %1:</source>
        <translation>%1 的新名称：</translation>
    </message>
    <message>
        <source>Renamed %1 to %2.</source>
        <translation>已将 %1 重命名为 %2。</translation>
    </message>
    <message>
        <source>Delete profile</source>
        <translation>删除配置文件</translation>
    </message>
    <message>
        <source>Delete profile %1 and its secrets in the keychain? This cannot be undone.</source>
        <translation>要删除配置文件 %1 及其在钥匙串中的机密项吗？此操作无法撤销。</translation>
    </message>
    <message>
        <source>Keychain unavailable</source>
        <translation>钥匙串不可用</translation>
    </message>
    <message>
        <source>%1

Delete the profile anyway and leave its secrets in the keychain?</source>
        <translation>%1

仍要删除该配置文件，并将其机密项留在钥匙串中吗？</translation>
    </message>
    <message>
        <source>Deleted profile %1, but %2</source>
        <translation>已删除配置文件 %1，但 %2</translation>
    </message>
    <message>
        <source>Deleted profile %1.</source>
        <translation>已删除配置文件 %1。</translation>
    </message>
    <message>
        <source>Import kubeconfig</source>
        <translation>导入 kubeconfig</translation>
    </message>
    <message>
        <source>%1 defines no contexts; there is nothing to import.</source>
        <translation>%1 未定义任何上下文；没有可导入的内容。</translation>
    </message>
    <message>
        <source>Context to import from %1:</source>
        <translation>要从 %1 导入的上下文：</translation>
    </message>
    <message>
        <source>Profile to create or update from context %1:</source>
        <translation>要根据上下文 %1 创建或更新的配置文件：</translation>
    </message>
    <message>
        <source>Profile %1 exists. Replace its API server, CA, TLS, proxy and credential settings with those of context %2?</source>
        <translation>配置文件 %1 已存在。要用上下文 %2 的设置替换其 API 服务器、CA、TLS、代理和凭据设置吗？</translation>
    </message>
    <message>
        <source>Imported context %1 into profile %2.</source>
        <translation>已将上下文 %1 导入配置文件 %2。</translation>
    </message>
    <message>
        <source>Took %1</source>
        <translation>已采用 %1</translation>
    </message>
    <message>
        <source>Note: %1</source>
        <translation>注意：%1</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; — active</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; — 活动</translation>
    </message>
    <message>
        <source>%1 is the active profile.</source>
        <translation>%1 是活动配置文件。</translation>
    </message>
    <message numerus="yes">
        <source>Saved %n change(s) to profile %1.</source>
        <translation>
            <numerusform>已将 %n 项更改保存到配置文件 %1。</numerusform>
        </translation>
    </message>
    <message>
        <source>Testing the saved settings of %1; apply your edits to test them.</source>
        <translation>正在测试 %1 已保存的设置；请先应用您的修改再进行测试。</translation>
    </message>
    <message>
        <source>profile %1</source>
        <translation>配置文件 %1</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ProgressPlot</name>
    <message>
        <source>Training progress plot</source>
        <translation>训练进度图</translation>
    </message>
    <message>
        <source>No training metrics yet: they appear once the driver's log reports a step.</source>
        <translation>尚无训练指标：driver 日志报告步后即会显示。</translation>
    </message>
    <message numerus="yes">
        <source>%1 over %n step(s): %2 at step %3, %4 at step %5.</source>
        <translation>
            <numerusform>%1 共 %n 步：第 %3 步为 %2，第 %5 步为 %4。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n step(s) reported nan.</source>
        <translation>
            <numerusform>有 %n 步报告了 nan。</numerusform>
        </translation>
    </message>
    <message>
        <source>Cursor: step %1, %2 %3.</source>
        <translation>光标：第 %1 步，%2 %3。</translation>
    </message>
    <message>
        <source>No metrics yet</source>
        <translation>尚无指标</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>第 %1 步</translation>
    </message>
    <message>
        <source>step %1: %2</source>
        <translation>第 %1 步：%2</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::RecipePage</name>
    <message>
        <source>&amp;Script:</source>
        <translation>脚本(&amp;S)：</translation>
    </message>
    <message>
        <source>A&amp;dd override</source>
        <translation>添加覆盖项(&amp;D)</translation>
    </message>
    <message>
        <source>Add an override</source>
        <translation>添加一个覆盖项</translation>
    </message>
    <message>
        <source>Remove override</source>
        <translation>删除覆盖项</translation>
    </message>
    <message>
        <source>Remove the selected override</source>
        <translation>删除所选覆盖项</translation>
    </message>
    <message>
        <source>Environment variables</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>Add &amp;variable</source>
        <translation>添加变量(&amp;V)</translation>
    </message>
    <message>
        <source>Add an environment variable</source>
        <translation>添加一个环境变量</translation>
    </message>
    <message>
        <source>Remove variable</source>
        <translation>删除变量</translation>
    </message>
    <message>
        <source>Remove the selected environment variable</source>
        <translation>删除所选环境变量</translation>
    </message>
    <message>
        <source>Environment variables from Kubernetes Secrets</source>
        <translation>来自 Kubernetes Secret 的环境变量</translation>
    </message>
    <message>
        <source>Secret</source>
        <translation>Secret</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Add secret variab&amp;le</source>
        <translation>添加 Secret 变量(&amp;L)</translation>
    </message>
    <message>
        <source>Add a variable from a Secret</source>
        <translation>从 Secret 添加变量</translation>
    </message>
    <message>
        <source>Remove secret variable</source>
        <translation>删除 Secret 变量</translation>
    </message>
    <message>
        <source>Remove the selected secret variable</source>
        <translation>删除所选 Secret 变量</translation>
    </message>
    <message>
        <source>Recipe</source>
        <translation>配方</translation>
    </message>
    <message>
        <source>What NeMo-RL runs: the entry point, its config and overrides, the image and the environment.</source>
        <translation>NeMo-RL 运行的内容：入口点、其配置和覆盖项、镜像以及环境变量。</translation>
    </message>
    <message>
        <source>Algorithm or script</source>
        <translation>算法或脚本</translation>
    </message>
    <message>
        <source>%1 (examples/run_%1.py)</source>
        <translation>%1 (examples/run_%1.py)</translation>
    </message>
    <message>
        <source>A script from the code folder</source>
        <translation>代码文件夹中的脚本</translation>
    </message>
    <message>
        <source>Script</source>
        <translation>脚本</translation>
    </message>
    <message>
        <source>Config file</source>
        <translation>YAML 配置</translation>
    </message>
    <message>
        <source>Overrides</source>
        <translation>覆盖项</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>镜像</translation>
    </message>
    <message>
        <source>&amp;Algorithm:</source>
        <translation>算法(&amp;A)：</translation>
    </message>
    <message>
        <source>&amp;Config:</source>
        <translation>配置(&amp;C)：</translation>
    </message>
    <message>
        <source>&amp;Image:</source>
        <translation>镜像(&amp;I)：</translation>
    </message>
    <message>
        <source>&amp;Overrides (Hydra: key=value, +key=value, ~key):</source>
        <translation>覆盖项(&amp;O)（Hydra：key=value、+key=value、~key）：</translation>
    </message>
    <message>
        <source>&amp;Environment (not RAY_ or FORGE_ names):</source>
        <translation>环境变量(&amp;E)（不能使用 RAY_ 或 FORGE_ 开头的名称）：</translation>
    </message>
    <message>
        <source>Secre&amp;t environment (from a Kubernetes Secret):</source>
        <translation>机密环境变量(&amp;T)（来自 Kubernetes Secret）：</translation>
    </message>
    <message>
        <source>Empty: the profile's image (FORGE_IMAGE_NEMO_RL), %1.</source>
        <translation>留空：使用配置文件中的镜像（FORGE_IMAGE_NEMO_RL），即 %1。</translation>
    </message>
    <message>
        <source>recipe.config: %1 is not a packed file of the code folder; pick one from the list.</source>
        <translation>recipe.config: %1 不是代码文件夹中已打包的文件；请从列表中选择一个。</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ResourcesPage</name>
    <message>
        <source>Add a &amp;generation pool</source>
        <translation>添加生成池(&amp;G)</translation>
    </message>
    <message>
        <source>&amp;Remove the second pool</source>
        <translation>删除第二个池(&amp;R)</translation>
    </message>
    <message>
        <source>Mount the &amp;storage volume (checkpoints, results)</source>
        <translation>挂载存储卷(&amp;S)（检查点、结果）</translation>
    </message>
    <message>
        <source>Mount the &amp;corpus volume, read-only</source>
        <translation>以只读方式挂载语料卷(&amp;C)</translation>
    </message>
    <message>
        <source>Submit it &amp;anyway: it waits as Pending until the cluster has such nodes</source>
        <translation>仍然提交(&amp;A)：它会以 Pending 状态等待，直到集群中有这样的节点</translation>
    </message>
    <message>
        <source>Resources</source>
        <translation>资源</translation>
    </message>
    <message>
        <source>The pools of GPU machines the job runs on, with what the cluster has free now, and its volumes.</source>
        <translation>作业运行所在的 GPU 机器池（以及集群当前的空闲情况），还有其存储卷。</translation>
    </message>
    <message>
        <source>Pools</source>
        <translation>池</translation>
    </message>
    <message>
        <source>Pool</source>
        <translation>池</translation>
    </message>
    <message>
        <source>GPU series (free/total)</source>
        <translation>GPU 系列（空闲/总数）</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点数</translation>
    </message>
    <message>
        <source>GPUs per node</source>
        <translation>每节点 GPU 数</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>可容纳性</translation>
    </message>
    <message>
        <source>Add a generation pool</source>
        <translation>添加生成池</translation>
    </message>
    <message>
        <source>Remove the second pool</source>
        <translation>删除第二个池</translation>
    </message>
    <message>
        <source>Mount the storage volume</source>
        <translation>挂载存储卷</translation>
    </message>
    <message>
        <source>Mount the corpus volume</source>
        <translation>挂载语料卷</translation>
    </message>
    <message>
        <source>Submit a job that can never fit anyway</source>
        <translation>仍然提交一个永远无法容纳的作业</translation>
    </message>
    <message>
        <source>Pools (the first holds the Ray head):</source>
        <translation>池（第一个池承载 Ray head）：</translation>
    </message>
    <message>
        <source>primary pool</source>
        <translation>主池</translation>
    </message>
    <message>
        <source>second pool</source>
        <translation>第二个池</translation>
    </message>
    <message>
        <source>Name of the %1</source>
        <translation>%1的名称</translation>
    </message>
    <message>
        <source>GPU series of the %1</source>
        <translation>%1的 GPU 系列</translation>
    </message>
    <message>
        <source>Nodes of the %1</source>
        <translation>%1的节点数</translation>
    </message>
    <message>
        <source>GPUs per node of the %1</source>
        <translation>%1的每节点 GPU 数</translation>
    </message>
    <message>
        <source>Fit of the %1</source>
        <translation>%1的可容纳性</translation>
    </message>
    <message>
        <source>%1 — %2/%3 GPUs free</source>
        <translation>%1 — 空闲 %2/%3 个 GPU</translation>
    </message>
    <message>
        <source>%1 — not in this cluster</source>
        <translation>%1 — 不在此集群中</translation>
    </message>
    <message>
        <source>Volume claim %1 at %2%3.</source>
        <translation>卷声明 %1，挂载于 %2%3。</translation>
    </message>
    <message>
        <source>, shared between nodes</source>
        <translation>，在节点间共享</translation>
    </message>
    <message>
        <source>, not shared between nodes</source>
        <translation>，未在节点间共享</translation>
    </message>
    <message>
        <source>Off: the profile has no storage volume claim (FORGE_K8S_STORAGE_PVC).</source>
        <translation>关闭：配置文件中没有存储卷声明（FORGE_K8S_STORAGE_PVC）。</translation>
    </message>
    <message>
        <source>Volume claim %1, read-only.</source>
        <translation>卷声明 %1，只读。</translation>
    </message>
    <message>
        <source>Off: the profile has no corpus volume claim (FORGE_K8S_CORPUS_PVC).</source>
        <translation>关闭：配置文件中没有语料卷声明（FORGE_K8S_CORPUS_PVC）。</translation>
    </message>
    <message>
        <source>%1 runs on one pool: only %2 generate on a pool of their own.</source>
        <translation>%1 只在一个池上运行：只有 %2 才会在独立的池上生成。</translation>
    </message>
    <message>
        <source>pools[%1]: %2 can never run on this cluster: %3</source>
        <translation>pools[%1]: %2 永远无法在此集群上运行：%3</translation>
    </message>
    <message>
        <source>The job fits once busy GPUs free up; it waits as Pending until then (you can submit it now).</source>
        <translation>繁忙的 GPU 释放后即可容纳该作业；在此之前它会以 Pending 状态等待（您现在就可以提交）。</translation>
    </message>
    <message>
        <source>Capacity unknown</source>
        <translation>容量未知</translation>
    </message>
    <message>
        <source>Not connected: the fit verdict appears once the cluster answers.</source>
        <translation>未连接：集群应答后会显示可容纳性判断。</translation>
    </message>
    <message>
        <source>Reading the cluster's nodes and pods…</source>
        <translation>正在读取集群的节点和 Pod…</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ReviewPage</name>
    <message>
        <source>&amp;Copy RayJob</source>
        <translation>复制 RayJob(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Save JobSpec…</source>
        <translation>保存 JobSpec(&amp;S)…</translation>
    </message>
    <message>
        <source>Review</source>
        <translation>审阅</translation>
    </message>
    <message>
        <source>The RayJob this creates, exactly as it will be sent (only the Capsule URL's signature is made again), and the Capsule.</source>
        <translation>此操作将创建的 RayJob，与实际发送的内容完全一致（仅 Capsule URL 的签名会重新生成），以及 Capsule。</translation>
    </message>
    <message>
        <source>S&amp;ubmit</source>
        <translation>提交(&amp;U)</translation>
    </message>
    <message>
        <source>The RayJob, as JSON</source>
        <translation>RayJob（JSON 格式）</translation>
    </message>
    <message>
        <source>Copy the RayJob to the clipboard</source>
        <translation>将 RayJob 复制到剪贴板</translation>
    </message>
    <message>
        <source>Save the JobSpec to a file</source>
        <translation>将 JobSpec 保存到文件</translation>
    </message>
    <message>
        <source>&amp;RayJob (ray.io/v1):</source>
        <translation>RayJob (ray.io/v1)(&amp;R)：</translation>
    </message>
    <message>
        <source>Saved to %1</source>
        <translation>已保存到 %1</translation>
    </message>
    <message>
        <source>Cannot save the JobSpec to %1: %2. Choose another folder.</source>
        <translation>无法将 JobSpec 保存到 %1：%2。请选择其他文件夹。</translation>
    </message>
    <message>
        <source>Building the Capsule to know its content address…</source>
        <translation>正在构建 Capsule 以确定其内容地址…</translation>
    </message>
    <message>
        <source>The Capsule cannot be built: %1</source>
        <translation>无法构建 Capsule：%1</translation>
    </message>
    <message>
        <source>Capsule %1…: %2 files, %3 zipped (object capsules/%4.zip). The bucket is asked for it before any upload: an unchanged folder is not uploaded again.</source>
        <translation>Capsule %1…：%2 个文件，压缩后 %3（对象 capsules/%4.zip）。上传前会先向存储桶查询：未更改的文件夹不会重复上传。</translation>
    </message>
    <message>
        <source>Not connected: connect to a cluster (the profile in the toolbar) to see and submit the RayJob.</source>
        <translation>未连接：请连接到集群（工具栏中的配置文件）以查看并提交 RayJob。</translation>
    </message>
    <message>
        <source>KubeRay %1 enforces it (spec.preRunningDeadlineSeconds, from 1.6), and the app as well</source>
        <translation>KubeRay %1 会执行它（spec.preRunningDeadlineSeconds，自 1.6 起），本应用也会执行</translation>
    </message>
    <message>
        <source>this app enforces it: KubeRay %1 predates spec.preRunningDeadlineSeconds (1.6), so it is an annotation the app's tracker reads</source>
        <translation>由本应用执行：KubeRay %1 早于 spec.preRunningDeadlineSeconds（1.6），因此它是一个由本应用的跟踪器读取的注解</translation>
    </message>
    <message>
        <source>Pre-running deadline: %1 s (FORGE_KUBERAY_PRERUNNING_DEADLINE_S); %2. TTL after it ends: %3 s (FORGE_KUBERAY_TTL_SECONDS, ttlSecondsAfterFinished, which KubeRay %4 applies).</source>
        <translation>运行前截止时间：%1 秒（FORGE_KUBERAY_PRERUNNING_DEADLINE_S）；%2。结束后的 TTL：%3 秒（FORGE_KUBERAY_TTL_SECONDS，即 ttlSecondsAfterFinished，由 KubeRay %4 应用）。</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::SettingDelegate</name>
    <message>
        <source>%1 (default)</source>
        <translation>%1（默认）</translation>
    </message>
    <message>
        <source>paste the new value; it goes to the keychain</source>
        <translation>粘贴新值；它将保存到钥匙串</translation>
    </message>
    <message>
        <source>default: %1</source>
        <translation>默认值：%1</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::SignInDialog</name>
    <message>
        <source>&amp;Send</source>
        <translation>发送(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Cancel sign-in</source>
        <translation>取消登录(&amp;C)</translation>
    </message>
    <message>
        <source>Sign in to the cluster</source>
        <translation>登录集群</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; is signing you in. Follow what it says below; the window goes on once it is done.</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; 正在为您登录。请按照下方的提示操作；完成后窗口会继续。</translation>
    </message>
    <message>
        <source>What the sign-in program says</source>
        <translation>登录程序的输出</translation>
    </message>
    <message>
        <source>Answer to the sign-in program</source>
        <translation>对登录程序的回答</translation>
    </message>
    <message>
        <source>Type an answer if it asks for one, then Send</source>
        <translation>如果它要求输入，请键入回答，然后点击“发送”</translation>
    </message>
    <message>
        <source>Signing in failed: %1</source>
        <translation>登录失败：%1</translation>
    </message>
    <message>
        <source>&amp;Close</source>
        <translation>关闭(&amp;C)</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::SubmitPage</name>
    <message>
        <source>Build the Capsule</source>
        <translation>构建 Capsule</translation>
    </message>
    <message>
        <source>Check the bucket for it</source>
        <translation>在存储桶中查找它</translation>
    </message>
    <message>
        <source>Upload it</source>
        <translation>上传</translation>
    </message>
    <message>
        <source>Create the RayJob</source>
        <translation>创建 RayJob</translation>
    </message>
    <message>
        <source>&amp;Try again</source>
        <translation>重试(&amp;T)</translation>
    </message>
    <message>
        <source>Submit</source>
        <translation>提交</translation>
    </message>
    <message>
        <source>Cancel stops at the current step and removes what this submission made.</source>
        <translation>“取消”会在当前步骤停止，并移除本次提交所创建的内容。</translation>
    </message>
    <message>
        <source>Submission steps</source>
        <translation>提交步骤</translation>
    </message>
    <message>
        <source>Progress of the current step</source>
        <translation>当前步骤的进度</translation>
    </message>
    <message>
        <source>Bytes and rate</source>
        <translation>字节数和速率</translation>
    </message>
    <message>
        <source>Try the submission again</source>
        <translation>重新尝试提交</translation>
    </message>
    <message>
        <source>Not connected.</source>
        <translation>未连接。</translation>
    </message>
    <message>
        <source>Cannot submit: %1 Connect to the cluster (the profile in the toolbar), then press Try again.</source>
        <translation>无法提交：%1 请连接到集群（工具栏中的配置文件），然后点击“重试”。</translation>
    </message>
    <message>
        <source>the cluster is not connected.</source>
        <translation>未连接到集群。</translation>
    </message>
    <message>
        <source>0 bytes: already in the bucket</source>
        <translation>0 字节：已在存储桶中</translation>
    </message>
    <message>
        <source>%1: %2 of %3, %4/s</source>
        <translation>%1：%2 / %3，%4/s</translation>
    </message>
    <message>
        <source>Uploaded</source>
        <translation>已上传</translation>
    </message>
    <message>
        <source>Packed</source>
        <translation>已打包</translation>
    </message>
    <message>
        <source>The submission failed: %1
Nothing of it was left on the cluster. Fix the cause, then press Try again (the same job id, so never two jobs), or go Back to change the job.</source>
        <translation>提交失败：%1
集群上没有留下任何内容。请修复原因，然后点击“重试”（使用相同的作业 ID，因此绝不会产生两个作业），或点击“上一步”返回修改作业。</translation>
    </message>
    <message>
        <source>%1 uploaded</source>
        <translation>已上传 %1</translation>
    </message>
    <message>
        <source>Cancelling: removing what this submission made…</source>
        <translation>正在取消：正在移除本次提交所创建的内容…</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::SubmitWizard</name>
    <message>
        <source>New Job — Starforge</source>
        <translation>新建作业 — Starforge</translation>
    </message>
    <message>
        <source>Submit a training job</source>
        <translation>提交训练作业</translation>
    </message>
    <message>
        <source>Code folder</source>
        <translation>代码文件夹</translation>
    </message>
    <message>
        <source>Save JobSpec</source>
        <translation>保存 JobSpec</translation>
    </message>
    <message>
        <source>JobSpec (*.json)</source>
        <translation>JobSpec (*.json)</translation>
    </message>
    <message>
        <source>%1 does not exist: give a JobSpec file or a code folder.</source>
        <translation>%1 不存在：请提供 JobSpec 文件或代码文件夹。</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::TimelineView</name>
    <message>
        <source>Pending</source>
        <translation>Pending</translation>
    </message>
    <message>
        <source>Suspended</source>
        <translation>Suspended</translation>
    </message>
    <message>
        <source>Initializing</source>
        <translation>Initializing</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>Running</translation>
    </message>
    <message>
        <source>Succeeded</source>
        <translation>Succeeded</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>Failed</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>Stopped</translation>
    </message>
    <message>
        <source> (evidence of the diagnosis)</source>
        <translation> (诊断依据)</translation>
    </message>
    <message>
        <source>Event timeline</source>
        <translation>事件时间线</translation>
    </message>
    <message>
        <source>The job's events on a time axis, one lane per object, the job's phases behind. Left and Right go to the previous and next event, Up and Down to the lane above or below, + and - zoom, 0 fits the whole job, Shift+Left and Shift+Right pan.</source>
        <translation>作业事件的时间轴，每个对象一条泳道，作业的各阶段显示在背景中。左右方向键跳转到上一个和下一个事件，上下方向键跳转到上方或下方的泳道，+ 和 - 缩放，0 适应整个作业，Shift+左和 Shift+右平移。</translation>
    </message>
    <message>
        <source>No events are known for this job yet.</source>
        <translation>此作业尚无已知事件。</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::TranscriptView</name>
    <message>
        <source>Ask something below. Replies stream in as the model writes them.</source>
        <translation>在下方提问。模型生成回复时会实时流式显示。</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>You</source>
        <translation>您</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Regenerate the last reply</source>
        <translation>重新生成最后一条回复</translation>
    </message>
</context>
<context>
    <name>Starforge::Job::JobArchiver</name>
    <message>
        <source>A job without a job id cannot be archived.</source>
        <translation>没有作业 ID 的作业无法归档。</translation>
    </message>
    <message>
        <source>The logs of pod %1: it was never scheduled (%2).</source>
        <translation>Pod %1 的日志：该 Pod 从未被调度（%2）。</translation>
    </message>
    <message>
        <source>The logs of pod %1: its containers never started.</source>
        <translation>Pod %1 的日志：其容器从未启动。</translation>
    </message>
    <message>
        <source>The log of %1 in pod %2: the container never started (%3).</source>
        <translation>Pod %2 中 %1 的日志：该容器从未启动（%3）。</translation>
    </message>
    <message>
        <source>The RayJob %1 itself: the operator deleted it (%2 DeleteSelf, %3 s after the job ended) before Starforge archived it, and its RayCluster, submitter Job and pods went with it; its final status is the last one Starforge saw.</source>
        <translation>RayJob %1 本身：operator 在 Starforge 归档之前删除了它（%2 DeleteSelf，作业结束 %3 秒后），其 RayCluster、提交器 Job 和 Pod 也随之删除；其最终状态为 Starforge 最后看到的状态。</translation>
    </message>
    <message>
        <source>The RayJob %1 itself was deleted before Starforge archived it (by a person or tool, or by an operator running with DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true, %2 s after the job ended); its RayCluster, submitter Job and pods went with it, and its final status is the last one Starforge saw.</source>
        <translation>RayJob %1 本身在 Starforge 归档之前已被删除（由某人或某个工具删除，或由以 DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true 运行的 operator 在作业结束 %2 秒后删除）；其 RayCluster、提交器 Job 和 Pod 也随之删除，其最终状态为 Starforge 最后看到的状态。</translation>
    </message>
    <message>
        <source>The RayJob %1 itself was deleted before Starforge archived it; its RayCluster, submitter Job and pods went with it, and its final status is the last one Starforge saw.</source>
        <translation>RayJob %1 本身在 Starforge 归档之前已被删除；其 RayCluster、提交器 Job 和 Pod 也随之删除，其最终状态为 Starforge 最后看到的状态。</translation>
    </message>
    <message>
        <source>Head and worker logs: the pods of RayCluster %1 were already gone.</source>
        <translation>Head 和 worker 日志：RayCluster %1 的 Pod 已不存在。</translation>
    </message>
    <message>
        <source>Head and worker logs: RayCluster %1 was already deleted (%2, %3 s after the job ended).</source>
        <translation>Head 和 worker 日志：RayCluster %1 已被删除（%2，作业结束 %3 秒后）。</translation>
    </message>
    <message>
        <source>Worker logs: the operator removed the worker pods of RayCluster %1 (%2, %3 s after the job ended).</source>
        <translation>Worker 日志：operator 删除了 RayCluster %1 的 worker Pod（%2，作业结束 %3 秒后）。</translation>
    </message>
    <message>
        <source>The driver's log: the submitter pod of %1 was already gone.</source>
        <translation>Driver 日志：%1 的提交器 Pod 已不存在。</translation>
    </message>
    <message>
        <source>The RayJob %1 was deleted before Starforge archived it: its pods, logs and final status are gone.</source>
        <translation>RayJob %1 在 Starforge 归档之前已被删除：其 Pod、日志和最终状态均已丢失。</translation>
    </message>
    <message>
        <source>Events older than an hour: the API server keeps events for an hour by default, and the job ended %1 min before it was archived.</source>
        <translation>超过一小时的事件：API 服务器默认只保留一小时的事件，而该作业在归档前 %1 分钟就已结束。</translation>
    </message>
    <message>
        <source>Cannot make a temporary file for the log of %1 in pod %2 in %3: %4</source>
        <translation>无法在 %3 中为 Pod %2 中 %1 的日志创建临时文件：%4</translation>
    </message>
    <message>
        <source>read the log of %1 in pod %2</source>
        <translation>读取 Pod %2 中 %1 的日志</translation>
    </message>
    <message>
        <source>The log of %1 in pod %2: %3</source>
        <translation>Pod %2 中 %1 的日志：%3</translation>
    </message>
    <message>
        <source>Cannot write the log of %1 in pod %2 to %3: %4</source>
        <translation>无法将 Pod %2 中 %1 的日志写入 %3：%4</translation>
    </message>
    <message>
        <source>Archiving to %1 failed: %2 The RayJob is kept; the archive will be tried again.</source>
        <translation>归档到 %1 失败：%2 RayJob 已保留；稍后将重试归档。</translation>
    </message>
    <message>
        <source>delete RayJob %1</source>
        <translation>删除 RayJob %1</translation>
    </message>
    <message>
        <source>The job is archived, but its RayJob could not be deleted: %1</source>
        <translation>作业已归档，但无法删除其 RayJob：%1</translation>
    </message>
</context>
<context>
    <name>Starforge::Job::JobNotices</name>
    <message>
        <source>%1 succeeded</source>
        <translation>%1 已成功</translation>
    </message>
    <message>
        <source>It ran for %1 min.</source>
        <translation>运行了 %1 分钟。</translation>
    </message>
    <message>
        <source>The job finished.</source>
        <translation>作业已完成。</translation>
    </message>
    <message>
        <source>%1 missed its start deadline</source>
        <translation>%1 错过了启动截止时间</translation>
    </message>
    <message>
        <source>%1 failed</source>
        <translation>%1 已失败</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>See its logs and events.</source>
        <translation>请查看其日志和事件。</translation>
    </message>
    <message>
        <source>%1 was stopped</source>
        <translation>%1 已被停止</translation>
    </message>
    <message>
        <source>Stopped from elsewhere (another Starforge, the command line or kubectl).</source>
        <translation>已从其他地方停止（另一个 Starforge、命令行或 kubectl）。</translation>
    </message>
    <message>
        <source>Stopped from elsewhere: %1</source>
        <translation>已从其他地方停止：%1</translation>
    </message>
</context>
<context>
    <name>Starforge::Job::JobTracker</name>
    <message>
        <source>The RayJob %1 was deleted outside Starforge while it was %2.</source>
        <translation>RayJob %1 在处于 %2 状态时被 Starforge 之外的操作删除。</translation>
    </message>
    <message>
        <source>The RayJob %1 was deleted outside Starforge before it was archived; what its pods still had was kept.</source>
        <translation>RayJob %1 在归档之前被 Starforge 之外的操作删除；已保留其 Pod 中尚存的内容。</translation>
    </message>
    <message>
        <source>Not running %1 s after it was submitted (the pre-running deadline it was submitted with, FORGE_KUBERAY_PRERUNNING_DEADLINE_S = %2 s); Starforge failed it.</source>
        <translation>提交 %1 秒后仍未运行（提交时设定的运行前截止时间 FORGE_KUBERAY_PRERUNNING_DEADLINE_S = %2 s）；Starforge 已将其标记为失败。</translation>
    </message>
    <message>
        <source>Not running %1 s after the operator started it (the pre-running deadline it was submitted with, FORGE_KUBERAY_PRERUNNING_DEADLINE_S = %2 s); Starforge failed it.</source>
        <translation>operator 启动它 %1 秒后仍未运行（提交时设定的运行前截止时间 FORGE_KUBERAY_PRERUNNING_DEADLINE_S = %2 s）；Starforge 已将其标记为失败。</translation>
    </message>
    <message>
        <source>No job %1 is on the cluster; it may have ended and been archived already (see the job history).</source>
        <translation>集群上没有作业 %1；它可能已经结束并被归档（请查看作业历史）。</translation>
    </message>
    <message>
        <source>stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Stopped from Starforge while it was %1.</source>
        <translation>在处于 %1 状态时从 Starforge 停止。</translation>
    </message>
    <message>
        <source>The RayJob %1 was deleted while no Starforge tracker ran; it was last seen %2, and how it ended is unknown.</source>
        <translation>RayJob %1 在没有 Starforge 跟踪器运行时被删除；最后一次看到它是在 %2，其结束方式未知。</translation>
    </message>
</context>
<context>
    <name>Starforge::Job::Submitter</name>
    <message>
        <source>runner.pex was not found at %1; build the project (it is packed at build time).</source>
        <translation>在 %1 未找到 runner.pex；请构建项目（它在构建时打包）。</translation>
    </message>
    <message>
        <source>Cannot make a temporary folder for the Capsule: %1.</source>
        <translation>无法为 Capsule 创建临时文件夹：%1。</translation>
    </message>
    <message>
        <source>Submission cancelled while the Capsule was being built; nothing was sent.</source>
        <translation>在构建 Capsule 时取消了提交；未发送任何内容。</translation>
    </message>
    <message>
        <source>Checking the bucket for the Capsule failed: %1</source>
        <translation>在存储桶中查找 Capsule 失败：%1</translation>
    </message>
    <message>
        <source>Submission cancelled during the upload; the unfinished upload was aborted.</source>
        <translation>在上传期间取消了提交；未完成的上传已中止。</translation>
    </message>
    <message>
        <source>The uploaded Capsule cannot be checked in the bucket: %1</source>
        <translation>无法在存储桶中校验已上传的 Capsule：%1</translation>
    </message>
    <message>
        <source>The uploaded Capsule does not check out: the bucket has %1 bytes, the Capsule %2.</source>
        <translation>已上传的 Capsule 校验不通过：存储桶中为 %1 字节，而 Capsule 为 %2 字节。</translation>
    </message>
    <message>
        <source>The uploaded Capsule does not check out: the bucket has an object with SHA-256 %1 under its address. Submit again.</source>
        <translation>已上传的 Capsule 校验不通过：存储桶中该地址下对象的 SHA-256 为 %1。请重新提交。</translation>
    </message>
    <message>
        <source>create the RayJob %1</source>
        <translation>创建 RayJob %1</translation>
    </message>
    <message>
        <source>check whether the RayJob %1 was created</source>
        <translation>检查 RayJob %1 是否已创建</translation>
    </message>
    <message>
        <source>A RayJob named %1 already exists and is not this submission; nothing was changed.</source>
        <translation>名为 %1 的 RayJob 已存在，且不属于本次提交；未做任何更改。</translation>
    </message>
    <message>
        <source>The RayJob could not be created after %1 attempts: %2</source>
        <translation>尝试 %1 次后仍无法创建 RayJob：%2</translation>
    </message>
    <message>
        <source>Submission cancelled before it started.</source>
        <translation>提交在开始前已取消。</translation>
    </message>
    <message>
        <source>Submission cancelled; nothing was sent.</source>
        <translation>提交已取消；未发送任何内容。</translation>
    </message>
    <message>
        <source>Submission cancelled; no job was created.</source>
        <translation>提交已取消；未创建任何作业。</translation>
    </message>
    <message>
        <source>delete the RayJob %1</source>
        <translation>删除 RayJob %1</translation>
    </message>
    <message>
        <source>Submission cancelled; the RayJob %1 was deleted.</source>
        <translation>提交已取消；RayJob %1 已删除。</translation>
    </message>
    <message>
        <source>Submission cancelled, but the RayJob %1 could not be deleted: %2</source>
        <translation>提交已取消，但无法删除 RayJob %1：%2</translation>
    </message>
    <message>
        <source>it is still there</source>
        <translation>它仍然存在</translation>
    </message>
</context>
<context>
    <name>Starforge::Kube::ExecCredentialProvider</name>
    <message>
        <source>Signing in with %1 was cancelled.</source>
        <translation>已取消使用 %1 登录。</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 needs a person to sign in (interactiveMode: Always), and there is none here. Sign in from the Starforge window, or from starforge-cli on a terminal.</source>
        <translation>exec 凭据插件 %1 需要有人登录（interactiveMode: Always），但此处无人可以操作。请在 Starforge 窗口中登录，或在终端中使用 starforge-cli 登录。</translation>
    </message>
    <message>
        <source>%1 is not an executable file.</source>
        <translation>%1 不是可执行文件。</translation>
    </message>
    <message>
        <source>'%1' is not on PATH.</source>
        <translation>'%1' 不在 PATH 中。</translation>
    </message>
    <message>
        <source>Install it, or give its full path in the kubeconfig's user.exec.command (FORGE_K8S_EXEC).</source>
        <translation>请安装它，或在 kubeconfig 的 user.exec.command（FORGE_K8S_EXEC）中提供其完整路径。</translation>
    </message>
    <message>
        <source>Cannot sign in: the exec credential plugin %1 %2</source>
        <translation>无法登录：exec 凭据插件：%1 %2</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 could not be started: %2</source>
        <translation>无法启动 exec 凭据插件 %1：%2</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 crashed.</source>
        <translation>exec 凭据插件 %1 崩溃了。</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 failed (exit code %2).</source>
        <translation>exec 凭据插件 %1 失败（退出码 %2）。</translation>
    </message>
    <message>
        <source>It said: %1</source>
        <translation>其输出：%1</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 printed no ExecCredential on its standard output (%2).</source>
        <translation>exec 凭据插件 %1 未在标准输出中打印 ExecCredential（%2）。</translation>
    </message>
    <message>
        <source>it printed nothing</source>
        <translation>它没有任何输出</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 printed a '%2', not an ExecCredential.</source>
        <translation>exec 凭据插件 %1 打印的是 '%2'，而不是 ExecCredential。</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 answered in %2, but the kubeconfig asks for %3; set the exec apiVersion to what the plugin speaks.</source>
        <translation>exec 凭据插件 %1 以 %2 应答，但 kubeconfig 要求 %3；请将 exec 的 apiVersion 设为该插件使用的版本。</translation>
    </message>
    <message>
        <source>no apiVersion</source>
        <translation>无 apiVersion</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 gave an expirationTimestamp that is not RFC 3339: '%2'.</source>
        <translation>exec 凭据插件 %1 给出的 expirationTimestamp 不符合 RFC 3339：'%2'。</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 returned a credential that expired at %2; check this machine's clock.</source>
        <translation>exec 凭据插件 %1 返回的凭据已于 %2 过期；请检查本机的时钟。</translation>
    </message>
    <message>
        <source>the certificate exec plugin %1 returned</source>
        <translation>证书 exec 插件 %1 返回的内容</translation>
    </message>
    <message>
        <source>the key exec plugin %1 returned</source>
        <translation>密钥 exec 插件 %1 返回的内容</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 returned neither a token nor a client certificate and key.</source>
        <translation>exec 凭据插件 %1 既未返回令牌，也未返回客户端证书和密钥。</translation>
    </message>
</context>
<context>
    <name>Starforge::Kube::Informer</name>
    <message>
        <source>list %1</source>
        <translation>列出 %1</translation>
    </message>
    <message>
        <source>list %1 in namespace %2</source>
        <translation>列出命名空间 %2 中的 %1</translation>
    </message>
    <message>
        <source>watch %1</source>
        <translation>监视 %1</translation>
    </message>
    <message>
        <source>The API server ended the watch of %1 at once with nothing in it.</source>
        <translation>API 服务器立即结束了对 %1 的监视，且未返回任何内容。</translation>
    </message>
    <message>
        <source>The watch of %1 broke: %2</source>
        <translation>对 %1 的监视中断：%2</translation>
    </message>
</context>
<context>
    <name>Starforge::Kube::LogStream</name>
    <message>
        <source>follow the log of pod %1</source>
        <translation>跟踪 Pod %1 的日志</translation>
    </message>
    <message>
        <source>The log stream of pod %1 broke: %2</source>
        <translation>Pod %1 的日志流中断：%2</translation>
    </message>
    <message>
        <source>read pod %1</source>
        <translation>读取 Pod %1</translation>
    </message>
    <message>
        <source>The container of pod %1 is not running yet.</source>
        <translation>Pod %1 的容器尚未运行。</translation>
    </message>
</context>
<context>
    <name>Starforge::Kube::OperatorProbe</name>
    <message>
        <source>The cluster's rayjobs.ray.io CustomResourceDefinition serves no ray.io/v1 version: its KubeRay is older than 1.0. Starforge needs KubeRay %1 or newer.</source>
        <translation>集群的 rayjobs.ray.io CustomResourceDefinition 未提供 ray.io/v1 版本：其 KubeRay 早于 1.0。Starforge 需要 KubeRay %1 或更高版本。</translation>
    </message>
    <message>
        <source>KubeRay %1 or older: the RayJob CustomResourceDefinition has none of %2.</source>
        <translation>KubeRay %1 或更早版本：RayJob CustomResourceDefinition 不含 %2 中的任何一项。</translation>
    </message>
    <message>
        <source>KubeRay %1: the RayJob CustomResourceDefinition has %2.</source>
        <translation>KubeRay %1：RayJob CustomResourceDefinition 含有 %2。</translation>
    </message>
    <message>
        <source>get the rayjobs.ray.io CustomResourceDefinition</source>
        <translation>获取 rayjobs.ray.io CustomResourceDefinition</translation>
    </message>
    <message>
        <source>it is not a CustomResourceDefinition</source>
        <translation>它不是 CustomResourceDefinition</translation>
    </message>
    <message>
        <source>The KubeRay version could not be read: %1</source>
        <translation>无法读取 KubeRay 版本：%1</translation>
    </message>
    <message>
        <source>KubeRay is not installed: the cluster has no rayjobs.ray.io CustomResourceDefinition, so it cannot run RayJobs. Ask the cluster's administrator to install the KubeRay operator (1.6 or newer).</source>
        <translation>未安装 KubeRay：集群中没有 rayjobs.ray.io CustomResourceDefinition，因此无法运行 RayJob。请让集群管理员安装 KubeRay operator（1.6 或更高版本）。</translation>
    </message>
    <message>
        <source>The KubeRay version is unknown: the token may not read CustomResourceDefinitions (get customresourcedefinitions in apiextensions.k8s.io at the cluster scope). Starforge assumes KubeRay %1, without preRunningDeadlineSeconds, and enforces the pre-running deadline itself.</source>
        <translation>KubeRay 版本未知：该令牌可能无权读取 CustomResourceDefinition（在集群范围内对 apiextensions.k8s.io 中的 customresourcedefinitions 执行 get）。Starforge 假定为 KubeRay %1，不带 preRunningDeadlineSeconds，并自行执行运行前截止时间。</translation>
    </message>
</context>
<context>
    <name>Starforge::Kube::PermissionCheck</name>
    <message>
        <source>%1 %2 at the cluster scope</source>
        <translation>在集群范围内对 %2 执行 %1</translation>
    </message>
    <message>
        <source>%1 %2 in namespace %3</source>
        <translation>在命名空间 %3 中对 %2 执行 %1</translation>
    </message>
    <message>
        <source>Submitting and tracking jobs</source>
        <translation>提交和跟踪作业</translation>
    </message>
    <message>
        <source>Event timeline and diagnosis</source>
        <translation>事件时间线和诊断</translation>
    </message>
    <message>
        <source>Live logs</source>
        <translation>实时日志</translation>
    </message>
    <message>
        <source>Capacity heatmap and fit verdicts</source>
        <translation>容量热力图和可容纳性判断</translation>
    </message>
    <message>
        <source>Playground chat</source>
        <translation>试验场聊天</translation>
    </message>
    <message>
        <source>The token may use every feature in namespace %1.</source>
        <translation>该令牌可以在命名空间 %1 中使用所有功能。</translation>
    </message>
    <message>
        <source>%1 is unavailable: the token cannot %2.</source>
        <translation>%1 不可用：该令牌无法%2。</translation>
    </message>
    <message>
        <source>check whether the token may %1</source>
        <translation>检查该令牌能否%1</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::CapacityNodesModel</name>
    <message>
        <source>1 GPU</source>
        <translation>1 个 GPU</translation>
    </message>
    <message>
        <source>%1 GPUs</source>
        <translation>%1 个 GPU</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>no series</source>
        <translation>无系列</translation>
    </message>
    <message>
        <source>No GPUs</source>
        <translation>无 GPU</translation>
    </message>
    <message>
        <source>%1 of %2 GPUs in use, %3 free</source>
        <translation>%2 个 GPU 中已用 %1 个，空闲 %3 个</translation>
    </message>
    <message>
        <source>Blocked: %1</source>
        <translation>受阻：%1</translation>
    </message>
    <message>
        <source>%1/%2: %3</source>
        <translation>%1/%2: %3</translation>
    </message>
    <message>
        <source>No pod uses its GPUs</source>
        <translation>没有 Pod 使用其 GPU</translation>
    </message>
    <message>
        <source>Pods using its GPUs:</source>
        <translation>使用其 GPU 的 Pod：</translation>
    </message>
    <message>
        <source>  and %1 more</source>
        <translation>  以及另外 %1 个</translation>
    </message>
    <message>
        <source>1 more pod without GPUs</source>
        <translation>另有 1 个不使用 GPU 的 Pod</translation>
    </message>
    <message>
        <source>%1 more pods without GPUs</source>
        <translation>另有 %1 个不使用 GPU 的 Pod</translation>
    </message>
    <message>
        <source>schedulable</source>
        <translation>可调度</translation>
    </message>
    <message>
        <source>%1: %2 of %3 GPUs in use</source>
        <translation>%1：%3 个 GPU 中已用 %2 个</translation>
    </message>
    <message>
        <source>%1: %2 of %3 GPUs in use, blocked: %4</source>
        <translation>%1：%3 个 GPU 中已用 %2 个，受阻：%4</translation>
    </message>
    <message>
        <source>%1/%2 (%3)</source>
        <translation>%1/%2 (%3)</translation>
    </message>
    <message>
        <source>Node</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Series</source>
        <translation>系列</translation>
    </message>
    <message>
        <source>GPUs used</source>
        <translation>已用 GPU</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Pods</source>
        <translation>Pod</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::CapacitySeriesModel</name>
    <message>
        <source>%1 (%2 blocked)</source>
        <translation>%1（%2 个受阻）</translation>
    </message>
    <message>
        <source>%1 (1 pod)</source>
        <translation>%1（1 个 Pod）</translation>
    </message>
    <message>
        <source>%1 (%2 pods)</source>
        <translation>%1（%2 个 Pod）</translation>
    </message>
    <message>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Nodes labelled %1; blocked: cordoned, not ready or tainted</source>
        <translation>带有标签 %1 的节点；受阻：已封锁、未就绪或有污点</translation>
    </message>
    <message>
        <source>Allocatable GPUs of all its nodes</source>
        <translation>其所有节点的可分配 GPU</translation>
    </message>
    <message>
        <source>GPUs requested by the pods bound to its nodes</source>
        <translation>绑定到其节点的 Pod 所请求的 GPU</translation>
    </message>
    <message>
        <source>Unused GPUs on schedulable nodes</source>
        <translation>可调度节点上未使用的 GPU</translation>
    </message>
    <message>
        <source>Unused GPUs on cordoned, not ready or tainted nodes</source>
        <translation>已封锁、未就绪或有污点的节点上未使用的 GPU</translation>
    </message>
    <message>
        <source>The most free GPUs on one schedulable node</source>
        <translation>单个可调度节点上最多的空闲 GPU 数</translation>
    </message>
    <message>
        <source>GPUs asked by Pending pods that wait for %1 (not yet bound to a node)</source>
        <translation>等待 %1 的 Pending Pod 所请求的 GPU（尚未绑定到节点）</translation>
    </message>
    <message>
        <source>The largest job that fits now: %1 × %2 GPUs (nodes × GPUs per node), %3 GPUs in all</source>
        <translation>当前可容纳的最大作业：%1 × %2 个 GPU（节点数 × 每节点 GPU 数），共 %3 个 GPU</translation>
    </message>
    <message>
        <source>No job fits now: no schedulable node has a free GPU</source>
        <translation>当前无法容纳任何作业：没有哪个可调度节点有空闲 GPU</translation>
    </message>
    <message>
        <source>Series</source>
        <translation>系列</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Used</source>
        <translation>已用</translation>
    </message>
    <message>
        <source>Free</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Blocked</source>
        <translation>受阻</translation>
    </message>
    <message>
        <source>Largest free</source>
        <translation>最大空闲</translation>
    </message>
    <message>
        <source>Pending</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>Fits now</source>
        <translation>当前可容纳</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::CheckpointsModel</name>
    <message>
        <source>Ready to chat</source>
        <translation>可直接聊天</translation>
    </message>
    <message>
        <source>Convert first: %1</source>
        <translation>需先转换：%1</translation>
    </message>
    <message>
        <source>No Hugging Face weights</source>
        <translation>无 Hugging Face 权重</translation>
    </message>
    <message>
        <source>Serve %1 with the tokenizer %2</source>
        <translation>使用分词器 %2 部署 %1</translation>
    </message>
    <message>
        <source>%1 wrote no consolidated model for step %2. %3</source>
        <translation>%1 没有为第 %2 步写出整合后的模型。%3</translation>
    </message>
    <message>
        <source>Step %1, %2, %3</source>
        <translation>第 %1 步，%2，%3</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>Chat</source>
        <translation>聊天</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>后端</translation>
    </message>
    <message>
        <source>Path</source>
        <translation>路径</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::CodeTreeModel</name>
    <message>
        <source>1 byte</source>
        <translation>1 字节</translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation>%1 字节</translation>
    </message>
    <message>
        <source>excluded: %1</source>
        <translation>已排除：%1</translation>
    </message>
    <message>
        <source>%1 is not packed: excluded by %2</source>
        <translation>%1 未打包：被 %2 排除</translation>
    </message>
    <message>
        <source>%1 is packed</source>
        <translation>%1 已打包</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Left out by</source>
        <translation>排除依据</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::GroupedSettingsModel</name>
    <message>
        <source>%1. %2</source>
        <translation>%1. %2</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; (environment variable &lt;code&gt;%2&lt;/code&gt;)&lt;br&gt;%3</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;（环境变量 &lt;code&gt;%2&lt;/code&gt;）&lt;br&gt;%3</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::JobPodsModel</name>
    <message>
        <source>Pending</source>
        <translation>Pending</translation>
    </message>
    <message>
        <source>Waiting: %1</source>
        <translation>等待中：%1</translation>
    </message>
    <message>
        <source>%1: exit code %2</source>
        <translation>%1：退出码 %2</translation>
    </message>
    <message>
        <source>%1: %2, exit code %3</source>
        <translation>%1：%2，退出码 %3</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>not scheduled</source>
        <translation>未调度</translation>
    </message>
    <message>
        <source>Pod</source>
        <translation>Pod</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>角色</translation>
    </message>
    <message>
        <source>Phase</source>
        <translation>阶段</translation>
    </message>
    <message>
        <source>Node</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Restarts</source>
        <translation>重启次数</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::JobsModel</name>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <translation>%1 分 %2 秒</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <translation>%1 小时 %2 分</translation>
    </message>
    <message>
        <source>just now</source>
        <translation>刚刚</translation>
    </message>
    <message>
        <source>%1 min ago</source>
        <translation>%1 分钟前</translation>
    </message>
    <message>
        <source>%1 h ago</source>
        <translation>%1 小时前</translation>
    </message>
    <message>
        <source>%1 d ago</source>
        <translation>%1 天前</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>you</source>
        <translation>您</translation>
    </message>
    <message>
        <source>Job %1 (%2), RayJob %3</source>
        <translation>作业 %1（%2），RayJob %3</translation>
    </message>
    <message>
        <source>Reason: %1</source>
        <translation>原因：%1</translation>
    </message>
    <message>
        <source>Cause: %1</source>
        <translation>起因：%1</translation>
    </message>
    <message>
        <source>Not archived: %1</source>
        <translation>未归档：%1</translation>
    </message>
    <message>
        <source>Submitted %1</source>
        <translation>提交于 %1</translation>
    </message>
    <message numerus="yes">
        <source>%1: %n GPU(s) in all (nodes × GPUs per node, series)</source>
        <translation>
            <numerusform>%1：共 %n 个 GPU（节点数 × 每节点 GPU 数，系列）</numerusform>
        </translation>
    </message>
    <message>
        <source>Ray started it %1</source>
        <translation>Ray 启动于 %1</translation>
    </message>
    <message>
        <source>It ended without running</source>
        <translation>未运行即已结束</translation>
    </message>
    <message>
        <source>Not started yet</source>
        <translation>尚未启动</translation>
    </message>
    <message>
        <source>Ended %1, %2 after Ray started it</source>
        <translation>结束于 %1，Ray 启动后 %2</translation>
    </message>
    <message>
        <source>Ended %1 without running</source>
        <translation>结束于 %1，未曾运行</translation>
    </message>
    <message>
        <source>The job records no owner: it was made before Starforge recorded owners, and nobody's app acts on it</source>
        <translation>该作业没有记录所有者：它创建于 Starforge 记录所有者之前，任何人的应用都不会对其执行操作</translation>
    </message>
    <message>
        <source>Yours (%1)</source>
        <translation>您的（%1）</translation>
    </message>
    <message>
        <source>%1's job: shown read-only, only its owner's app stops, archives or deletes it</source>
        <translation>%1 的作业：以只读方式显示，只有其所有者的应用才能停止、归档或删除它</translation>
    </message>
    <message>
        <source>Why it is pending — %1</source>
        <translation>为何在等待 — %1</translation>
    </message>
    <message>
        <source>ID</source>
        <translation>ID</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Owner</source>
        <translation>所有者</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Pools</source>
        <translation>池</translation>
    </message>
    <message>
        <source>Submitted</source>
        <translation>提交时间</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>时长</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>进度</translation>
    </message>
    <message>
        <source>Ended</source>
        <translation>结束时间</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>The job id (starforge.dev/job-id)</source>
        <translation>作业 ID（starforge.dev/job-id）</translation>
    </message>
    <message>
        <source>The RayJob's name</source>
        <translation>RayJob 的名称</translation>
    </message>
    <message>
        <source>Whose job it is (starforge.dev/owner): you, or a colleague sharing the namespace</source>
        <translation>作业归属（starforge.dev/owner）：您，或共享该命名空间的同事</translation>
    </message>
    <message>
        <source>Submitting, Pending, Running, Succeeded, Failed or Stopped; Archived once its logs and events are in the bucket</source>
        <translation>Submitting、Pending、Running、Succeeded、Failed 或 Stopped；日志和事件存入存储桶后为 Archived</translation>
    </message>
    <message>
        <source>What the job asked for: nodes × GPUs per node and the GPU series, per pool</source>
        <translation>作业的请求：每个池的节点数 × 每节点 GPU 数以及 GPU 系列</translation>
    </message>
    <message>
        <source>How long ago the job was submitted</source>
        <translation>作业提交了多久</translation>
    </message>
    <message>
        <source>How long Ray has run the job, or ran it</source>
        <translation>Ray 运行该作业已有（或曾有）多长时间</translation>
    </message>
    <message>
        <source>How far training has come, from the driver's log (runner progress lines), followed while the job runs</source>
        <translation>训练进行到哪一步，来自 driver 日志（runner 进度行），作业运行期间持续跟踪</translation>
    </message>
    <message>
        <source>When the job ended</source>
        <translation>作业结束的时间</translation>
    </message>
    <message>
        <source>Why a Pending job waits (the diagnosis, with the numbers), else KubeRay's or Starforge's message about the job</source>
        <translation>Pending 作业为何等待（诊断及相关数值），否则为 KubeRay 或 Starforge 关于该作业的消息</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::LogLinesModel</name>
    <message>
        <source>step %1/%2</source>
        <translation>第 %1/%2 步</translation>
    </message>
    <message>
        <source>epoch %1/%2</source>
        <translation>第 %1/%2 轮</translation>
    </message>
    <message>
        <source>checkpoint at step %1</source>
        <translation>检查点（第 %1 步）</translation>
    </message>
    <message>
        <source>exit code %1</source>
        <translation>退出码 %1</translation>
    </message>
    <message>
        <source>done: %1</source>
        <translation>完成：%1</translation>
    </message>
    <message numerus="yes">
        <source>start: %n file(s) in the Capsule</source>
        <translation>
            <numerusform>开始：Capsule 中有 %n 个文件</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Starforge::Models::PlaygroundPodsModel</name>
    <message>
        <source>expired</source>
        <translation>已过期</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 min</source>
        <translation>%1 分钟</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <translation>%1 小时 %2 分</translation>
    </message>
    <message>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
    <message>
        <source>The cluster ends the pod at %1 (activeDeadlineSeconds), whether or not the app runs.</source>
        <translation>无论应用是否运行，集群都会在 %1 结束该 Pod（activeDeadlineSeconds）。</translation>
    </message>
    <message>
        <source>ready to chat</source>
        <translation>可以聊天</translation>
    </message>
    <message>
        <source>Pod</source>
        <translation>Pod</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Time left</source>
        <translation>剩余时间</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::ProfileListModel</name>
    <message>
        <source>%1 (active)</source>
        <translation>%1（活动）</translation>
    </message>
    <message>
        <source>%1: no API server set</source>
        <translation>%1：未设置 API 服务器</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::ProfileSettingsModel</name>
    <message>
        <source>Setting</source>
        <translation>设置项</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>The environment variable %1 is set and overrides the profile while it is.</source>
        <translation>已设置环境变量 %1，在其设置期间会覆盖配置文件中的值。</translation>
    </message>
    <message>
        <source>(cleared on apply)</source>
        <translation>（应用时清除）</translation>
    </message>
    <message>
        <source>•••••••• (saved to the keychain on apply)</source>
        <translation>••••••••（应用时保存到钥匙串）</translation>
    </message>
    <message>
        <source>set in the environment</source>
        <translation>在环境变量中设置</translation>
    </message>
    <message>
        <source>(keychain unavailable)</source>
        <translation>（钥匙串不可用）</translation>
    </message>
    <message>
        <source>(checking keychain…)</source>
        <translation>（正在检查钥匙串…）</translation>
    </message>
    <message>
        <source>set in the keychain</source>
        <translation>在钥匙串中设置</translation>
    </message>
    <message>
        <source>not set</source>
        <translation>未设置</translation>
    </message>
    <message>
        <source>(unset on apply)</source>
        <translation>（应用时取消设置）</translation>
    </message>
    <message>
        <source>%1 (default, on apply)</source>
        <translation>%1（默认值，应用时生效）</translation>
    </message>
    <message>
        <source>(not set)</source>
        <translation>（未设置）</translation>
    </message>
    <message>
        <source>edited</source>
        <translation>已编辑</translation>
    </message>
    <message>
        <source>environment (profile: %1)</source>
        <translation>环境变量（配置文件：%1）</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::RunComparisonModel</name>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>Wall time (s)</source>
        <translation>墙钟时间（秒）</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::TimelineModel</name>
    <message>
        <source>%1 %2 on %3</source>
        <translation>%3 上的 %1 %2</translation>
    </message>
    <message numerus="yes">
        <source>, seen %n times from %1 to %2</source>
        <translation>
            <numerusform>，在 %1 至 %2 期间出现 %n 次</numerusform>
        </translation>
    </message>
    <message>
        <source>, at %1</source>
        <translation>，于 %1</translation>
    </message>
    <message>
        <source> (reported by %1)</source>
        <translation> (由 %1 报告)</translation>
    </message>
    <message>
        <source>Last seen</source>
        <translation>最后出现</translation>
    </message>
    <message>
        <source>Object</source>
        <translation>对象</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Count</source>
        <translation>次数</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::TranscriptModel</name>
    <message>
        <source>first token after %1 ms</source>
        <translation>首个 token 耗时 %1 ms</translation>
    </message>
    <message>
        <source> · %1 tokens/s</source>
        <translation> · %1 token/s</translation>
    </message>
    <message numerus="yes">
        <source> · %n token(s)</source>
        <translation>
            <numerusform> · %n 个 token</numerusform>
        </translation>
    </message>
    <message>
        <source> · cut at max tokens</source>
        <translation> · 达到最大 token 数而截断</translation>
    </message>
    <message>
        <source> · stopped</source>
        <translation> · 已停止</translation>
    </message>
    <message>
        <source># Playground conversation

</source>
        <translation># 试验场对话

</translation>
    </message>
    <message>
        <source>- Model: `%1` (pod `%2`)
</source>
        <translation>- 模型：`%1`（Pod `%2`）
</translation>
    </message>
    <message>
        <source>- Settings: temperature %1, top-p %2, max tokens %3
</source>
        <translation>- 设置：温度 %1，top-p %2，最大 token 数 %3
</translation>
    </message>
    <message>
        <source>- System prompt: %1
</source>
        <translation>- 系统提示词：%1
</translation>
    </message>
    <message>
        <source>
## You

</source>
        <translation>
## 您

</translation>
    </message>
    <message>
        <source>
## %1

</source>
        <translation>
## %1

</translation>
    </message>
    <message>
        <source>You: %1</source>
        <translation>您：%1</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>模型：%1</translation>
    </message>
    <message>
        <source> (still writing)</source>
        <translation> (仍在生成)</translation>
    </message>
</context>
<context>
    <name>Starforge::Playground::ChatStream</name>
    <message>
        <source>chat with %1 in pod %2</source>
        <translation>在 Pod %2 中与 %1 聊天</translation>
    </message>
    <message>
        <source>Cannot reach the pod %1 through the API server.</source>
        <translation>无法通过 API 服务器访问 Pod %1。</translation>
    </message>
    <message>
        <source>vLLM stopped the reply: %1</source>
        <translation>vLLM 中止了回复：%1</translation>
    </message>
    <message>
        <source>The chat stream sent an event too large to read.</source>
        <translation>聊天流发送的事件过大，无法读取。</translation>
    </message>
    <message>
        <source>No answer from the pod: %1</source>
        <translation>Pod 没有应答：%1</translation>
    </message>
    <message>
        <source>The chat was refused (HTTP %1): %2</source>
        <translation>聊天被拒绝（HTTP %1）：%2</translation>
    </message>
    <message>
        <source>The reply ended before vLLM finished it: the connection to the pod was cut.</source>
        <translation>回复在 vLLM 完成之前中断：与 Pod 的连接被切断。</translation>
    </message>
</context>
<context>
    <name>Starforge::S3::MultipartUpload</name>
    <message>
        <source>The upload of %1 has not finished yet.</source>
        <translation>%1 的上传尚未完成。</translation>
    </message>
    <message>
        <source>The S3 client is gone.</source>
        <translation>S3 客户端已不存在。</translation>
    </message>
    <message>
        <source>Cannot upload %1: the file does not exist or cannot be read.</source>
        <translation>无法上传 %1：文件不存在或无法读取。</translation>
    </message>
    <message>
        <source>The upload %1 of %2 to resume no longer exists on the server (completed, aborted or expired). Start the upload again.</source>
        <translation>要恢复的 %2 的上传 %1 在服务器上已不存在（已完成、已中止或已过期）。请重新开始上传。</translation>
    </message>
    <message>
        <source>Cannot read %1: %2.</source>
        <translation>无法读取 %1：%2。</translation>
    </message>
    <message>
        <source>Cannot read %1: the file became shorter during the upload. Upload it again once it no longer changes.</source>
        <translation>无法读取 %1：文件在上传期间变短了。请在它不再变化后重新上传。</translation>
    </message>
    <message>
        <source>Part %1 of %2: %3</source>
        <translation>第 %1 部分（共 %2 部分）：%3</translation>
    </message>
    <message>
        <source>Part %1 of %2: the server's answer has no ETag. Check that the endpoint is an S3 API address.</source>
        <translation>第 %1 部分（共 %2 部分）：服务器的应答中没有 ETag。请检查端点是否为 S3 API 地址。</translation>
    </message>
    <message>
        <source>The upload of %1 was cancelled.</source>
        <translation>%1 的上传已取消。</translation>
    </message>
    <message>
        <source>The upload of %1 was paused; it can be resumed with upload id %2.</source>
        <translation>%1 的上传已暂停；可以用上传 ID %2 恢复。</translation>
    </message>
    <message>
        <source>The unfinished upload %1 could not be aborted (%2); its parts stay on the server until it is aborted or a lifecycle rule removes it.</source>
        <translation>无法中止未完成的上传 %1（%2）；其分段会保留在服务器上，直到上传被中止或被生命周期规则删除。</translation>
    </message>
</context>
<context>
    <name>Starforge::Secrets::KeychainSecretStore</name>
    <message>
        <source>No Secret Service answered while %1 (%2). Starforge keeps tokens and keys only in the OS keychain: install and start gnome-keyring (apt install gnome-keyring libsecret-1-0) or enable KeePassXC's Secret Service integration, then try again. On a machine without a desktop session, run Starforge under dbus-run-session with gnome-keyring-daemon --unlock.</source>
        <extracomment>%1: the operation ("reading FORGE_K8S_TOKEN of profile 'lab'"), %2: the Secret Service's error</extracomment>
        <translation>在%1时，没有任何 Secret Service 应答（%2）。Starforge 只将令牌和密钥保存在操作系统钥匙串中：请安装并启动 gnome-keyring（apt install gnome-keyring libsecret-1-0），或启用 KeePassXC 的 Secret Service 集成，然后重试。在没有桌面会话的机器上，请在 dbus-run-session 下配合 gnome-keyring-daemon --unlock 运行 Starforge。</translation>
    </message>
    <message>
        <source>The keychain is locked or has no default collection while %1 (%2). Unlock your login keyring (e.g. in Seahorse, "Passwords and Keys") and try again.</source>
        <extracomment>%1: the operation ("reading FORGE_K8S_TOKEN of profile 'lab'"), %2: the Secret Service's error</extracomment>
        <translation>在%1时，钥匙串已锁定或没有默认集合（%2）。请解锁您的登录密钥环（例如在 Seahorse 的 "密码和密钥" 中），然后重试。</translation>
    </message>
    <message>
        <source>Access to the keychain was denied while %1 (%2). Allow Starforge to use the keychain and try again.</source>
        <extracomment>%1: the operation ("reading FORGE_K8S_TOKEN of profile 'lab'"), %2: the Secret Service's error</extracomment>
        <translation>在%1时，访问钥匙串被拒绝（%2）。请允许 Starforge 使用钥匙串，然后重试。</translation>
    </message>
    <message>
        <source>The keychain failed while %1: %2</source>
        <extracomment>%1: the operation ("reading FORGE_K8S_TOKEN of profile 'lab'"), %2: the Secret Service's error</extracomment>
        <translation>在%1时钥匙串出错：%2</translation>
    </message>
    <message>
        <source>reading %1 of profile '%2'</source>
        <extracomment>the operation a keychain message names after "while"; %1: the setting (FORGE_K8S_TOKEN), %2: the profile</extracomment>
        <translation>读取配置文件 '%2' 的 %1</translation>
    </message>
    <message>
        <source>saving %1 of profile '%2'</source>
        <extracomment>the operation a keychain message names after "while"; %1: the setting (FORGE_K8S_TOKEN), %2: the profile</extracomment>
        <translation>保存配置文件 '%2' 的 %1</translation>
    </message>
    <message>
        <source>removing %1 of profile '%2'</source>
        <extracomment>the operation a keychain message names after "while"; %1: the setting (FORGE_K8S_TOKEN), %2: the profile</extracomment>
        <translation>删除配置文件 '%2' 的 %1</translation>
    </message>
</context>
<context>
    <name>Starforge::Session</name>
    <message>
        <source>Not connected</source>
        <translation>未连接</translation>
    </message>
    <message>
        <source>Connecting (%1)…</source>
        <translation>正在连接（%1）…</translation>
    </message>
    <message>
        <source>Event journal on this machine</source>
        <translation>本机上的事件日志</translation>
    </message>
    <message>
        <source>the session has no object storage yet</source>
        <translation>会话尚无对象存储</translation>
    </message>
    <message>
        <source>Following %1 keeps failing (%2); retrying</source>
        <translation>跟踪 %1 持续失败（%2）；正在重试</translation>
    </message>
    <message>
        <source>reach the API server</source>
        <translation>访问 API 服务器</translation>
    </message>
    <message>
        <source>the token cannot %1</source>
        <translation>该令牌无法%1</translation>
    </message>
    <message>
        <source>The cluster could not say who you are (%1), so your jobs are recorded as %2's. Set FORGE_OWNER in the profile to the same name on every workstation you use.</source>
        <translation>集群无法确认您的身份（%1），因此您的作业记录为 %2 的作业。请在您使用的每台工作站上，将配置文件中的 FORGE_OWNER 设为相同的名称。</translation>
    </message>
    <message>
        <source>KubeRay %1 (given)</source>
        <translation>KubeRay %1（指定）</translation>
    </message>
    <message>
        <source>%1 Starforge enforces the pre-running deadline itself.</source>
        <translation>%1 Starforge 会自行执行运行前截止时间。</translation>
    </message>
    <message>
        <source>job tracking and history need the profile's object storage: %1 Set FORGE_S3_ENDPOINT, FORGE_S3_BUCKET, FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY (the keys are kept in the keychain), or in the environment.</source>
        <translation>作业跟踪和历史需要配置文件中的对象存储：%1 请设置 FORGE_S3_ENDPOINT、FORGE_S3_BUCKET、FORGE_S3_ACCESS_KEY 和 FORGE_S3_SECRET_KEY（密钥保存在钥匙串中），或在环境变量中设置。</translation>
    </message>
    <message>
        <source>Is FORGE_K8S_API_SERVER the cluster's API server?</source>
        <translation>FORGE_K8S_API_SERVER 是否为集群的 API 服务器？</translation>
    </message>
    <message>
        <source> (Kubernetes %1)</source>
        <translation> (Kubernetes %1)</translation>
    </message>
    <message>
        <source>Connected to %1%2, namespace %3</source>
        <translation>已连接到 %1%2，命名空间 %3</translation>
    </message>
    <message>
        <source>%1 is unavailable: %2.</source>
        <translation>%1 不可用：%2。</translation>
    </message>
    <message>
        <source>Not connected: %1</source>
        <translation>未连接：%1</translation>
    </message>
    <message>
        <source>The cluster has not answered for %1 s.</source>
        <translation>集群已 %1 秒没有应答。</translation>
    </message>
    <message>
        <source>reach the cluster</source>
        <translation>访问集群</translation>
    </message>
    <message>
        <source>The cluster answers again.</source>
        <translation>集群已恢复应答。</translation>
    </message>
    <message>
        <source>Lost the cluster at %1: %2 Still trying.</source>
        <translation>于 %1 与集群失去连接：%2 仍在重试。</translation>
    </message>
    <message>
        <source>Reconnecting (%1)…</source>
        <translation>正在重新连接（%1）…</translation>
    </message>
    <message>
        <source>Reconnecting: %1 Next try in %2 s.</source>
        <translation>正在重新连接：%1 将在 %2 秒后重试。</translation>
    </message>
</context>
<context>
    <name>Starforge::StartupCleanup</name>
    <message>
        <source>Could not list the unfinished uploads under %1: %2</source>
        <translation>无法列出 %1 下未完成的上传：%2</translation>
    </message>
    <message>
        <source>Could not abort the unfinished upload of %1: %2</source>
        <translation>无法中止 %1 未完成的上传：%2</translation>
    </message>
</context>
<context>
    <name>StarforgeApp</name>
    <message>
        <source>Start a local sandbox cluster (starforge-sandbox) and connect to it.</source>
        <translation>启动本地沙盒集群（starforge-sandbox）并连接到它。</translation>
    </message>
    <message>
        <source>Profiles file (default $STARFORGE_CONFIG_FILE, else ~/.config/starforge/profiles.ini).</source>
        <translation>保存连接配置的文件（默认为 $STARFORGE_CONFIG_FILE，否则为 ~/.config/starforge/profiles.ini）。</translation>
    </message>
    <message>
        <source>file</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Open the connection profiles dialog at start.</source>
        <translation>启动时打开“连接配置”对话框。</translation>
    </message>
    <message>
        <source>Light or dark for this run: system (as the desktop says), light or dark. View › Appearance keeps a choice.</source>
        <translation>本次运行使用浅色还是深色：system（跟随桌面设置）、light 或 dark。“视图 › 外观”可保存选择。</translation>
    </message>
    <message>
        <source>scheme</source>
        <translation>配色</translation>
    </message>
    <message>
        <source>Run NeMo-RL training on Kubernetes + KubeRay from the desktop.</source>
        <translation>从桌面在 Kubernetes + KubeRay 上运行 NeMo-RL 训练。</translation>
    </message>
    <message>
        <source>A JobSpec file or a code folder to open in the submission wizard.</source>
        <translation>要在提交向导中打开的 JobSpec 文件或代码文件夹。</translation>
    </message>
    <message>
        <source>[JOBSPEC | FOLDER]</source>
        <translation>[JOBSPEC | FOLDER]</translation>
    </message>
    <message>
        <source>starforge: --color-scheme is system, light or dark, not %1</source>
        <translation>starforge: --color-scheme 的值应为 system、light 或 dark，而不是 %1</translation>
    </message>
    <message>
        <source>starforge: give one JobSpec or folder, not %1</source>
        <translation>starforge: 请只指定一个 JobSpec 或文件夹，而不是 %1 个</translation>
    </message>
    <message>
        <source>starforge: sandbox ready; kubectl: KUBECONFIG=%1</source>
        <translation>starforge: 沙盒已就绪；kubectl: KUBECONFIG=%1</translation>
    </message>
</context>
<context>
    <name>SubmitCommand</name>
    <message>
        <source>building the Capsule...</source>
        <translation>正在构建 Capsule...</translation>
    </message>
    <message>
        <source>checking the bucket...</source>
        <translation>正在检查存储桶...</translation>
    </message>
    <message>
        <source>uploading...</source>
        <translation>正在上传...</translation>
    </message>
    <message>
        <source>creating the RayJob...</source>
        <translation>正在创建 RayJob...</translation>
    </message>
    <message numerus="yes">
        <source>%n day(s)</source>
        <translation><numerusform>%n 天</numerusform></translation>
    </message>
</context>
<context>
    <name>Submitter</name>
    <message>
        <source>(none recorded)</source>
        <translation>（未记录）</translation>
    </message>
</context>
<context>
    <name>Timeline</name>
    <message>
        <source>other pods</source>
        <translation>其他 Pod</translation>
    </message>
</context>
<context>
    <name>Timelinetext</name>
    <message>
        <source>No events or state changes are known for this job.
</source>
        <translation>此作业没有已知的事件或状态变化。
</translation>
    </message>
    <message>
        <source>%1 → %2 UTC, %3; one column ≈ %4
</source>
        <translation>%1 → %2 UTC，%3；每列 ≈ %4
</translation>
    </message>
    <message>
        <source>
events, time since %1:
</source>
        <translation>
事件，自 %1 起经过的时间：
</translation>
    </message>
    <message>
        <source>HH:mm:ss</source>
        <translation>HH:mm:ss</translation>
    </message>
</context>
<context>
    <name>Validation</name>
    <message>
        <source>%1 is %2 characters long; at most 63 are allowed</source>
        <translation>%1 长 %2 个字符；最多允许 63 个</translation>
    </message>
    <message>
        <source>%1 has uppercase letters; use lowercase (%2)</source>
        <translation>%1 含有大写字母；请使用小写（%2）</translation>
    </message>
    <message>
        <source>%1 contains %2; only lowercase letters, digits and '-' are allowed</source>
        <translation>%1 包含 %2；只允许使用小写字母、数字和 '-'</translation>
    </message>
    <message>
        <source>%1 must start and end with a lowercase letter or digit</source>
        <translation>%1 必须以小写字母或数字开头和结尾</translation>
    </message>
    <message>
        <source>a URL is required, e.g. https://api.example.com:6443</source>
        <translation>必须填写 URL，例如 https://api.example.com:6443</translation>
    </message>
    <message>
        <source>%1 is not a valid URL (%2)</source>
        <translation>%1 不是有效的 URL（%2）</translation>
    </message>
    <message>
        <source>%1 has no scheme; write it as https://%1</source>
        <translation>%1 没有协议；请写成 https://%1</translation>
    </message>
    <message>
        <source>%1 uses the scheme '%2'; only https:// and http:// are supported</source>
        <translation>%1 使用的协议是 '%2'；仅支持 https:// 和 http://</translation>
    </message>
    <message>
        <source>%1 has no host name; write e.g. %2://api.example.com:6443</source>
        <translation>%1 没有主机名；请写成例如 %2://api.example.com:6443 的形式</translation>
    </message>
    <message>
        <source>%1 carries user credentials; remove them from the URL and set the token or keys instead</source>
        <translation>%1 包含用户凭据；请将其从 URL 中删除，改为设置令牌或密钥</translation>
    </message>
    <message>
        <source>%1 has a query or fragment; remove the part after '?' or '#'</source>
        <translation>%1 包含查询或片段；请删除 '?' 或 '#' 之后的部分</translation>
    </message>
    <message>
        <source>write a number with an optional suffix, e.g. 64Gi, 512Mi or 1G (binary: Ki Mi Gi Ti Pi Ei; decimal: k M G T P E)</source>
        <translation>请写一个数字，可带后缀，例如 64Gi、512Mi 或 1G（二进制：Ki Mi Gi Ti Pi Ei；十进制：k M G T P E）</translation>
    </message>
    <message>
        <source>a quantity is required; %1</source>
        <extracomment>%1: how to write a quantity ("write a number with an optional suffix, ...")</extracomment>
        <translation>必须填写数量；%1</translation>
    </message>
    <message>
        <source>%1 is not a Kubernetes quantity; Kubernetes writes %2%3i (binary) or %2%3 (decimal)</source>
        <translation>%1 不是 Kubernetes 数量；Kubernetes 写作 %2%3i（二进制）或 %2%3（十进制）</translation>
    </message>
    <message>
        <source>%1 is not a Kubernetes quantity; %2</source>
        <extracomment>%2: how to write a quantity ("write a number with an optional suffix, ...")</extracomment>
        <translation>%1 不是 Kubernetes 数量；%2</translation>
    </message>
    <message>
        <source>%1 is negative; a size must be positive</source>
        <translation>%1 为负数；大小必须为正数</translation>
    </message>
    <message>
        <source>a name is required (lowercase letters, digits and '-')</source>
        <translation>必须填写名称（小写字母、数字和 '-'）</translation>
    </message>
    <message>
        <source>a name is required (lowercase letters, digits, '-' and '.')</source>
        <translation>必须填写名称（小写字母、数字、'-' 和 '.'）</translation>
    </message>
    <message>
        <source>%1 is %2 characters long; at most 253 are allowed</source>
        <translation>%1 长 %2 个字符；最多允许 253 个</translation>
    </message>
    <message>
        <source>%1 has an empty part between dots</source>
        <translation>%1 的两个点之间有空的部分</translation>
    </message>
    <message>
        <source>%1 (in %2)</source>
        <extracomment>%1: what is wrong with one part of the name %2</extracomment>
        <translation>%1（在 %2 中）</translation>
    </message>
    <message>
        <source>a label key is required, e.g. starforge/gpu-series</source>
        <translation>必须填写标签键，例如 starforge/gpu-series</translation>
    </message>
    <message>
        <source>%1 has more than one '/'; a label key is prefix/name</source>
        <translation>%1 含有多个 '/'；标签键的格式为 prefix/name</translation>
    </message>
    <message>
        <source>the prefix of %1 is not a DNS subdomain: %2</source>
        <translation>%1 的前缀不是 DNS 子域名：%2</translation>
    </message>
    <message>
        <source>the name part %1 of %2 must be 1 to 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit</source>
        <translation>%2 的名称部分 %1 必须由 1 到 63 个字母、数字、'-'、'_' 或 '.' 组成，并以字母或数字开头和结尾</translation>
    </message>
    <message>
        <source>%1 is not a whole number; write digits only, e.g. %2</source>
        <translation>%1 不是整数；请只填写数字，例如 %2</translation>
    </message>
    <message>
        <source>%1 is out of range; use a number from %2 to %3</source>
        <translation>%1 超出范围；请使用 %2 到 %3 之间的数字</translation>
    </message>
    <message>
        <source>%1 is not a yes/no value; write true or false (1/0, yes/no and on/off also work)</source>
        <translation>%1 不是是/否值；请填写 true 或 false（1/0、yes/no 和 on/off 也可以）</translation>
    </message>
    <message>
        <source>%1 is not an absolute path; start it with '/', e.g. /starforge</source>
        <translation>%1 不是绝对路径；请以 '/' 开头，例如 /starforge</translation>
    </message>
    <message>
        <source>%1 contains '..'; write the path without it</source>
        <translation>%1 包含 '..'；请写出不含它的路径</translation>
    </message>
    <message>
        <source>an image is required, e.g. nvcr.io/nvidia/nemo-rl:v0.7.0</source>
        <translation>必须填写镜像，例如 nvcr.io/nvidia/nemo-rl:v0.7.0</translation>
    </message>
    <message>
        <source>%1 contains a space; an image reference has none</source>
        <translation>%1 包含空格；镜像引用中不能有空格</translation>
    </message>
    <message>
        <source>%1 has a digest that is not sha256:&lt;64 hex digits&gt;</source>
        <translation>%1 的摘要不是 sha256:&lt;64 位十六进制数字&gt;</translation>
    </message>
    <message>
        <source>%1 is not an image reference; write [registry/]repository[:tag], with a lowercase repository, e.g. nvcr.io/nvidia/nemo-rl:v0.7.0</source>
        <translation>%1 不是镜像引用；请写成 [registry/]repository[:tag]，其中 repository 须为小写，例如 nvcr.io/nvidia/nemo-rl:v0.7.0</translation>
    </message>
    <message>
        <source>%1 is not an S3 bucket name; use 3 to 63 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit</source>
        <translation>%1 不是 S3 存储桶名称；请使用 3 到 63 个小写字母、数字、'-' 和 '.'，并以字母或数字开头和结尾</translation>
    </message>
    <message>
        <source>%1 is not a version; write it as major.minor.patch, e.g. 2.55.1</source>
        <translation>%1 不是版本号；请写成 major.minor.patch 的形式，例如 2.55.1</translation>
    </message>
    <message>
        <source>%1 is not an absolute path to a PEM file</source>
        <translation>%1 不是 PEM 文件的绝对路径</translation>
    </message>
    <message>
        <source>the CA file %1 does not exist</source>
        <translation>CA 文件 %1 不存在</translation>
    </message>
    <message>
        <source>the certificate file %1 does not exist</source>
        <translation>证书文件 %1 不存在</translation>
    </message>
    <message>
        <source>the CA file %1 is not a readable file</source>
        <translation>CA 文件 %1 不是可读取的文件</translation>
    </message>
    <message>
        <source>the certificate file %1 is not a readable file</source>
        <translation>证书文件 %1 不是可读取的文件</translation>
    </message>
    <message>
        <source>the CA file %1 holds no PEM certificate (-----BEGIN CERTIFICATE-----)</source>
        <translation>CA 文件 %1 中没有 PEM 证书（-----BEGIN CERTIFICATE-----）</translation>
    </message>
    <message>
        <source>the certificate file %1 holds no PEM certificate (-----BEGIN CERTIFICATE-----)</source>
        <translation>证书文件 %1 中没有 PEM 证书（-----BEGIN CERTIFICATE-----）</translation>
    </message>
    <message>
        <source>the CA data is not base64; paste the %1 value of a kubeconfig</source>
        <translation>CA 数据不是 base64；请粘贴 kubeconfig 中 %1 的值</translation>
    </message>
    <message>
        <source>the certificate data is not base64; paste the %1 value of a kubeconfig</source>
        <translation>证书数据不是 base64；请粘贴 kubeconfig 中 %1 的值</translation>
    </message>
    <message>
        <source>the CA data decodes to no PEM certificate (-----BEGIN CERTIFICATE-----)</source>
        <translation>CA 数据解码后不含 PEM 证书（-----BEGIN CERTIFICATE-----）</translation>
    </message>
    <message>
        <source>the certificate data decodes to no PEM certificate (-----BEGIN CERTIFICATE-----)</source>
        <translation>证书数据解码后不含 PEM 证书（-----BEGIN CERTIFICATE-----）</translation>
    </message>
    <message>
        <source>%1 is not a proxy URL; write e.g. http://proxy.example.com:3128 or socks5://127.0.0.1:1080</source>
        <translation>%1 不是代理 URL；请写成例如 http://proxy.example.com:3128 或 socks5://127.0.0.1:1080</translation>
    </message>
    <message>
        <source>%1 is a proxy reached over TLS (https://), which this app cannot speak to; give the proxy's plain http:// address (requests to https:// servers stay encrypted through it) or a socks5:// one</source>
        <translation>%1 是通过 TLS（https://）访问的代理，本应用无法与之通信；请填写该代理的明文 http:// 地址（发往 https:// 服务器的请求经由它时仍保持加密），或一个 socks5:// 地址</translation>
    </message>
    <message>
        <source>%1 uses the scheme '%2'; a proxy is http:// or socks5://</source>
        <translation>%1 使用的协议是 '%2'；代理应为 http:// 或 socks5://</translation>
    </message>
    <message>
        <source>%1 has no host name</source>
        <translation>%1 没有主机名</translation>
    </message>
    <message>
        <source>a profile name is required</source>
        <translation>必须填写配置文件名称</translation>
    </message>
    <message>
        <source>%1 is not a profile name; use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit</source>
        <translation>%1 不是有效的配置文件名称；请使用 1 到 63 个字母、数字、'.'、'_' 或 '-'，并以字母或数字开头</translation>
    </message>
</context>
<context>
    <name>ZipWriter</name>
    <message>
        <source>zlib could not start a deflate stream.</source>
        <translation>zlib 无法启动 deflate 流。</translation>
    </message>
    <message>
        <source>zlib failed while deflating %1.</source>
        <translation>zlib 在压缩 %1 时失败。</translation>
    </message>
    <message>
        <source>%1 changed while the capsule was being built. Build it again.</source>
        <translation>%1 在构建 Capsule 期间发生了变化。请重新构建。</translation>
    </message>
    <message>
        <source>Cannot read %1: %2.</source>
        <translation>无法读取 %1：%2。</translation>
    </message>
    <message>
        <source>Cannot write the capsule to %1: %2.</source>
        <translation>无法将 Capsule 写入 %1：%2。</translation>
    </message>
</context>
</TS>