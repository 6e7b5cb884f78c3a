<?xml version='1.0' encoding='utf-8'?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>Arguments</name>
    <message>
        <source>unknown option %1; see starforge-cli --help</source>
        <translation>unbekannte Option %1; siehe starforge-cli --help</translation>
    </message>
    <message>
        <source>--%1 needs a value, e.g. --%1 NAME</source>
        <translation>--%1 benötigt einen Wert, z. B. --%1 NAME</translation>
    </message>
    <message>
        <source>--%1 takes no value</source>
        <translation>--%1 akzeptiert keinen Wert</translation>
    </message>
    <message>
        <source>unknown option --%1; see starforge-cli --help</source>
        <translation>unbekannte Option --%1; siehe starforge-cli --help</translation>
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
        <translation>nicht bereit</translation>
    </message>
    <message>
        <source>Ready condition not True</source>
        <translation>Ready-Bedingung nicht True</translation>
    </message>
    <message>
        <source>the pool</source>
        <translation>der Pool</translation>
    </message>
    <message>
        <source>pool "%1"</source>
        <translation>Pool "%1"</translation>
    </message>
    <message>
        <source>needs %1 with %2 free GPUs of %3</source>
        <translation>braucht %1 mit je %2 freien GPUs der Serie %3</translation>
    </message>
    <message numerus="yes">
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n Knoten</numerusform>
            <numerusform>%n Knoten</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 can never fit: %2, and no node has the series "%3" (known series: %4)</source>
        <translation>%1 passt nie: %2, und kein Knoten hat die Serie "%3" (bekannte Serien: %4)</translation>
    </message>
    <message>
        <source>%1 can never fit: %2, and the largest %3 node has %4 GPUs</source>
        <translation>%1 passt nie: %2, und der größte %3-Knoten hat %4 GPUs</translation>
    </message>
    <message>
        <source>fits now</source>
        <translation>passt jetzt</translation>
    </message>
    <message>
        <source>waits for busy nodes</source>
        <translation>wartet auf belegte Knoten</translation>
    </message>
    <message>
        <source>can never fit</source>
        <translation>passt nie</translation>
    </message>
    <message numerus="yes">
        <source>%1 %2: %3; %n has %4 free now</source>
        <translation>
            <numerusform>%1 %2: %3; %n hat jetzt %4 frei</numerusform>
            <numerusform>%1 %2: %3; %n haben jetzt %4 frei</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>, %n more is busy</source>
        <translation>
            <numerusform>, %n weiterer ist belegt</numerusform>
            <numerusform>, %n weitere sind belegt</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>, %n more is cordoned, not ready or tainted</source>
        <translation>
            <numerusform>, %n weiterer ist abgesperrt, nicht bereit oder mit Taint</numerusform>
            <numerusform>, %n weitere sind abgesperrt, nicht bereit oder mit Taint</numerusform>
        </translation>
    </message>
    <message>
        <source>, %1 taken by the job's other pools</source>
        <translation>, %1 von den anderen Pools des Jobs belegt</translation>
    </message>
    <message>
        <source>; the series has only %1 big enough</source>
        <translation>; die Serie hat nur %1 mit genügend GPUs</translation>
    </message>
    <message numerus="yes">
        <source>%n schedulable node(s)</source>
        <translation><numerusform>%n planbarer Knoten</numerusform><numerusform>%n planbare Knoten</numerusform></translation>
    </message>
    <message>
        <source>; largest free node has %1</source>
        <translation>; der Knoten mit den meisten freien GPUs hat %1</translation>
    </message>
    <message>
        <source>no pools asked</source>
        <translation>keine Pools angefordert</translation>
    </message>
    <message>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <source>cordoned</source>
        <translation>abgesperrt</translation>
    </message>
    <message>
        <source>tainted</source>
        <translation>mit Taint</translation>
    </message>
</context>
<context>
    <name>Capsule</name>
    <message>
        <source>The capsule build was cancelled.</source>
        <translation>Das Bauen der Capsule wurde abgebrochen.</translation>
    </message>
    <message>
        <source>Cannot list the folder %1: %2. Make it readable or exclude it.</source>
        <translation>Der Ordner %1 kann nicht aufgelistet werden: %2. Machen Sie ihn lesbar oder schließen Sie ihn aus.</translation>
    </message>
    <message>
        <source>Cannot read %1: %2.</source>
        <translation>%1 kann nicht gelesen werden: %2.</translation>
    </message>
    <message>
        <source>version control data (never packed)</source>
        <translation>Versionskontrolldaten (werden nie gepackt)</translation>
    </message>
    <message>
        <source>The name "%1" is not valid UTF-8, and zip readers would garble it. Rename it or add it to the exclude patterns.</source>
        <translation>Der Name "%1" ist kein gültiges UTF-8, und Zip-Programme würden ihn verstümmeln. Benennen Sie ihn um oder fügen Sie ihn den Ausschlussmustern hinzu.</translation>
    </message>
    <message>
        <source>The code folder has its own %1 at its top, where the capsule puts the job's. Rename it or add "/%1" to the exclude patterns.</source>
        <translation>Der Code-Ordner enthält auf oberster Ebene eine eigene Datei %1; dort legt die Capsule die des Jobs ab. Benennen Sie sie um oder fügen Sie "/%1" den Ausschlussmustern hinzu.</translation>
    </message>
    <message>
        <source>The symbolic link %1 (-&gt; %2) is part of a loop. Fix the link or exclude it.</source>
        <translation>Der symbolische Link %1 (-&gt; %2) ist Teil einer Schleife. Korrigieren Sie den Link oder schließen Sie ihn aus.</translation>
    </message>
    <message>
        <source>The symbolic link %1 points to %2, which does not exist. Fix the link or exclude it.</source>
        <translation>Der symbolische Link %1 verweist auf %2, das nicht existiert. Korrigieren Sie den Link oder schließen Sie ihn aus.</translation>
    </message>
    <message>
        <source>The symbolic link %1 points outside the code folder (to %2), and the cluster cannot follow it. Copy the file into the folder or exclude the link.</source>
        <translation>Der symbolische Link %1 verweist aus dem Code-Ordner hinaus (auf %2), und der Cluster kann ihm nicht folgen. Kopieren Sie die Datei in den Ordner oder schließen Sie den Link aus.</translation>
    </message>
    <message>
        <source>The symbolic link %1 points to a folder; the capsule packs links to files only, as copies. Replace the link with the folder or exclude it.</source>
        <translation>Der symbolische Link %1 verweist auf einen Ordner; die Capsule packt nur Links auf Dateien, als Kopien. Ersetzen Sie den Link durch den Ordner oder schließen Sie ihn aus.</translation>
    </message>
    <message>
        <source>%1: %2, not packed</source>
        <translation>%1: %2, nicht gepackt</translation>
    </message>
    <message>
        <source>Cannot read %1: %2. Make it readable or exclude it.</source>
        <translation>%1 kann nicht gelesen werden: %2. Machen Sie die Datei lesbar oder schließen Sie sie aus.</translation>
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
        <translation>Die Capsule benötigt die jobspec.json des Jobs; es wurde keine angegeben.</translation>
    </message>
    <message>
        <source>The capsule needs runner.pex; none was given.</source>
        <translation>Die Capsule benötigt runner.pex; es wurde keine angegeben.</translation>
    </message>
    <message>
        <source>The capsule's top-level folder "%1" must be one plain name, such as "capsule".</source>
        <translation>Der oberste Ordner der Capsule, "%1", muss ein einfacher Name sein, etwa "capsule".</translation>
    </message>
    <message>
        <source>The compression level must be 1 to 9.</source>
        <translation>Die Komprimierungsstufe muss zwischen 1 und 9 liegen.</translation>
    </message>
    <message>
        <source>No output path was given for the capsule.</source>
        <translation>Für die Capsule wurde kein Ausgabepfad angegeben.</translation>
    </message>
    <message>
        <source>The code folder %1 does not exist.</source>
        <translation>Der Code-Ordner %1 existiert nicht.</translation>
    </message>
    <message>
        <source>%1 is not a folder.</source>
        <translation>%1 ist kein Ordner.</translation>
    </message>
    <message>
        <source>The folder for the capsule, %1, does not exist.</source>
        <translation>Der Ordner für die Capsule, %1, existiert nicht.</translation>
    </message>
    <message>
        <source>runner.pex was not found at %1.</source>
        <translation>runner.pex wurde unter %1 nicht gefunden.</translation>
    </message>
    <message>
        <source>a FIFO</source>
        <translation>ein FIFO</translation>
    </message>
    <message>
        <source>a socket</source>
        <translation>ein Socket</translation>
    </message>
    <message>
        <source>a device</source>
        <translation>eine Gerätedatei</translation>
    </message>
</context>
<context>
    <name>CheckpointForecast</name>
    <message>
        <source> Convert a step with NeMo-RL's %1 before the playground can serve it.</source>
        <translation> Konvertieren Sie einen Schritt mit %1 von NeMo-RL, bevor der Playground ihn bereitstellen kann.</translation>
    </message>
    <message>
        <source>checkpoints: the config does not turn checkpointing on (checkpointing.enabled is false or missing), so this job saves nothing the playground can serve. Add ++checkpointing.enabled=true to keep its weights.</source>
        <translation>Checkpoints: Die Konfiguration aktiviert kein Checkpointing (checkpointing.enabled ist false oder fehlt), daher speichert dieser Job nichts, was der Playground bereitstellen kann. Fügen Sie ++checkpointing.enabled=true hinzu, um seine Gewichte zu behalten.</translation>
    </message>
    <message>
        <source>checkpoints: this job trains with Megatron (policy.megatron_cfg.enabled), which writes no Hugging Face weights, so its checkpoints will not be chat-ready.</source>
        <translation>Checkpoints: Dieser Job trainiert mit Megatron (policy.megatron_cfg.enabled), das keine Hugging-Face-Gewichte schreibt, daher werden seine Checkpoints nicht chatbereit sein.</translation>
    </message>
    <message>
        <source>checkpoints: this job uses NeMo-RL's DTensor v1 worker (policy.dtensor_cfg._v2 is not true, as in the dpo and rm configs), which ignores save_consolidated, so its checkpoints will not be chat-ready. Add ++policy.dtensor_cfg._v2=true to get a consolidated model, or convert later.</source>
        <translation>Checkpoints: Dieser Job verwendet den DTensor-v1-Worker von NeMo-RL (policy.dtensor_cfg._v2 ist nicht true, wie in den dpo- und rm-Konfigurationen), der save_consolidated ignoriert, daher werden seine Checkpoints nicht chatbereit sein. Fügen Sie ++policy.dtensor_cfg._v2=true hinzu, um ein konsolidiertes Modell zu erhalten, oder konvertieren Sie später.</translation>
    </message>
    <message>
        <source>checkpoints: with LoRA (policy.dtensor_cfg.lora_cfg.enabled) NeMo-RL saves an adapter, not a consolidated model, so its checkpoints will not be chat-ready; merge the adapter into its base model before serving it.</source>
        <translation>Checkpoints: Mit LoRA (policy.dtensor_cfg.lora_cfg.enabled) speichert NeMo-RL einen Adapter statt eines konsolidierten Modells, daher werden seine Checkpoints nicht chatbereit sein; führen Sie den Adapter vor der Bereitstellung mit seinem Basismodell zusammen.</translation>
    </message>
    <message>
        <source>checkpoints: checkpointing.model_save_format is %1, and NeMo-RL consolidates only safetensors checkpoints, so this job's checkpoints will not be chat-ready.</source>
        <translation>Checkpoints: checkpointing.model_save_format ist %1, und NeMo-RL konsolidiert nur safetensors-Checkpoints, daher werden die Checkpoints dieses Jobs nicht chatbereit sein.</translation>
    </message>
</context>
<context>
    <name>CliOutput</name>
    <message numerus="yes">
        <source>%1 byte(s)</source>
        <comment>a size; the count decides the plural form</comment>
        <translation><numerusform>%1 Byte</numerusform><numerusform>%1 Bytes</numerusform></translation>
    </message>
    <message>
        <source>Could not %1: the server's answer is not a Kubernetes list. Is FORGE_K8S_API_SERVER the cluster's API server?</source>
        <translation>Vorgang fehlgeschlagen (%1): Die Antwort des Servers ist keine Kubernetes-Liste. Ist FORGE_K8S_API_SERVER der API-Server des Clusters?</translation>
    </message>
    <message>
        <source>you</source>
        <translation>Sie</translation>
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
        <translation>--user %1 ist zu lang für den Namen seines Token-Secrets: %2</translation>
    </message>
</context>
<context>
    <name>ConversationStore</name>
    <message>
        <source>(cannot be read)</source>
        <translation>(nicht lesbar)</translation>
    </message>
    <message>
        <source>"%1" is not a conversation.</source>
        <translation>"%1" ist keine Unterhaltung.</translation>
    </message>
    <message>
        <source>No conversation %1 in %2.</source>
        <translation>Keine Unterhaltung %1 in %2.</translation>
    </message>
    <message>
        <source>The conversation %1 cannot be read (%2); the file is kept as it is.</source>
        <translation>Die Unterhaltung %1 kann nicht gelesen werden (%2); die Datei bleibt unverändert erhalten.</translation>
    </message>
    <message>
        <source>Cannot make %1 for the conversations.</source>
        <translation>%1 kann für die Unterhaltungen nicht angelegt werden.</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>%1 kann nicht geschrieben werden: %2</translation>
    </message>
    <message>
        <source>Cannot remove %1.</source>
        <translation>%1 kann nicht entfernt werden.</translation>
    </message>
</context>
<context>
    <name>Diagnosis</name>
    <message>
        <source>pod %1 (gone now)</source>
        <translation>Pod %1 (nicht mehr vorhanden)</translation>
    </message>
    <message>
        <source>the registry does not have it</source>
        <translation>Die Registry hat es nicht</translation>
    </message>
    <message>
        <source>the registry refuses access without credentials the cluster has</source>
        <translation>Die Registry verweigert den Zugriff ohne Anmeldedaten im Cluster</translation>
    </message>
    <message>
        <source>the pull failed</source>
        <translation>Das Abrufen ist fehlgeschlagen</translation>
    </message>
    <message>
        <source>Image %1 cannot be pulled for container %2 of %3: %4</source>
        <translation>Image %1 kann für Container %2 von %3 nicht abgerufen werden: %4</translation>
    </message>
    <message numerus="yes">
        <source>%n attempt(s)</source>
        <translation><numerusform>%n Versuch</numerusform><numerusform>%n Versuche</numerusform></translation>
    </message>
    <message>
        <source>; %1 pods of the job cannot pull their images</source>
        <translation>; %1 Pods des Jobs können ihre Images nicht abrufen</translation>
    </message>
    <message>
        <source>The capsule download failed: init container %1 of %2 exited with code %3</source>
        <translation>Der Download der Capsule ist fehlgeschlagen: Init-Container %1 von %2 wurde mit Exit-Code %3 beendet</translation>
    </message>
    <message numerus="yes">
        <source>%n restart(s)</source>
        <translation><numerusform>%n Neustart</numerusform><numerusform>%n Neustarts</numerusform></translation>
    </message>
    <message>
        <source>; the pod cannot start until it can fetch and check the Capsule</source>
        <translation>; der Pod kann erst starten, wenn er die Capsule abrufen und prüfen kann</translation>
    </message>
    <message>
        <source>The capsule download failed: init container %1 of pod %2 (gone now) kept failing</source>
        <translation>Der Download der Capsule ist fehlgeschlagen: Init-Container %1 von Pod %2 (nicht mehr vorhanden) ist wiederholt fehlgeschlagen</translation>
    </message>
    <message>
        <source> of job %1</source>
        <translation> von Job %1</translation>
    </message>
    <message>
        <source>The capsule download failed: Ray could not fetch the working_dir%1: %2</source>
        <translation>Der Download der Capsule ist fehlgeschlagen: Ray konnte das working_dir%1 nicht abrufen: %2</translation>
    </message>
    <message>
        <source>Container %1 of %2 cannot be created from its configuration: %3</source>
        <translation>Container %1 von %2 kann nicht aus seiner Konfiguration erstellt werden: %3</translation>
    </message>
    <message>
        <source>A container of pod %1 (gone now) could not be created from its configuration: %2</source>
        <translation>Ein Container von Pod %1 (nicht mehr vorhanden) konnte nicht aus seiner Konfiguration erstellt werden: %2</translation>
    </message>
    <message>
        <source>Container %1 of %2 keeps crashing</source>
        <translation>Container %1 von %2 stürzt wiederholt ab</translation>
    </message>
    <message>
        <source>: it exited with code %1</source>
        <translation>: Er wurde mit Exit-Code %1 beendet</translation>
    </message>
    <message>
        <source> and was restarted %1</source>
        <translation> und wurde %1 neu gestartet</translation>
    </message>
    <message numerus="yes">
        <source>%n time(s)</source>
        <translation><numerusform>%n Mal</numerusform><numerusform>%n Mal</numerusform></translation>
    </message>
    <message>
        <source>, now waiting %1 before the next try</source>
        <translation>, wartet jetzt %1 bis zum nächsten Versuch</translation>
    </message>
    <message>
        <source>; its log (previous=true) says why</source>
        <translation>; sein Log (previous=true) nennt den Grund</translation>
    </message>
    <message>
        <source>A container of pod %1 (gone now) kept crashing: %2</source>
        <translation>Ein Container von Pod %1 (nicht mehr vorhanden) ist wiederholt abgestürzt: %2</translation>
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
        <translation> (%1 Pods des Jobs können nicht eingeplant werden)</translation>
    </message>
    <message>
        <source>asks for %1 on %2</source>
        <translation>fordert %1 auf %2 an</translation>
    </message>
    <message numerus="yes">
        <source>%n GPU(s)</source>
        <translation><numerusform>%n GPU</numerusform><numerusform>%n GPUs</numerusform></translation>
    </message>
    <message>
        <source>could not be placed</source>
        <translation>konnte nicht platziert werden</translation>
    </message>
    <message>
        <source>Not enough free GPUs: %1 %2</source>
        <translation>Nicht genügend freie GPUs: %1 %2</translation>
    </message>
    <message>
        <source>, but the largest free %1 node has %2; %3 of %4 %1 GPUs are free on %5</source>
        <translation>, aber der %1-Knoten mit den meisten freien GPUs hat %2; %3 von %4 %1-GPUs sind auf %5 frei</translation>
    </message>
    <message numerus="yes">
        <source>%n schedulable node(s)</source>
        <translation><numerusform>%n planbaren Knoten</numerusform><numerusform>%n planbaren Knoten</numerusform></translation>
    </message>
    <message>
        <source>, %1 more blocked</source>
        <translation>, zusätzlich %1 blockiert</translation>
    </message>
    <message>
        <source>, and %1 too few free</source>
        <translation>, und %1 zu wenige freie</translation>
    </message>
    <message numerus="yes">
        <source>%n node has</source>
        <translation><numerusform>%n Knoten hat</numerusform><numerusform>%n Knoten haben</numerusform></translation>
    </message>
    <message>
        <source>No node matches the selector: %1 asks for %2, and none of the %3 has it</source>
        <translation>Kein Knoten passt zum Selektor: %1 fordert %2 an, und keiner der %3 erfüllt dies</translation>
    </message>
    <message>
        <source>a node affinity</source>
        <translation>eine Knotenaffinität</translation>
    </message>
    <message numerus="yes">
        <source>%n node(s)</source>
        <translation><numerusform>%n Knoten</numerusform><numerusform>%n Knoten</numerusform></translation>
    </message>
    <message>
        <source>; known series: %1</source>
        <translation>; bekannte Serien: %1</translation>
    </message>
    <message>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <source>, </source>
        <translation>, </translation>
    </message>
    <message>
        <source>; the scheduler's other reasons matter only once a node has series %1</source>
        <translation>; die übrigen Gründe des Schedulers spielen erst eine Rolle, wenn ein Knoten die Serie %1 hat</translation>
    </message>
    <message>
        <source>; %1 asked</source>
        <translation>; %1 angefordert</translation>
    </message>
    <message>
        <source>A taint keeps the pod off: %1 %2, and a taint it does not tolerate rules out %3 of %4 (%5)</source>
        <translation>Ein Taint hält den Pod fern: %1 %2, und ein nicht tolerierter Taint schließt %3 von %4 aus (%5)</translation>
    </message>
    <message>
        <source>Nodes are cordoned: %1 %2, and %3 of %4 are cordoned (unschedulable)</source>
        <translation>Knoten sind abgesperrt: %1 %2, und %3 von %4 sind abgesperrt (unschedulable)</translation>
    </message>
    <message>
        <source>No known cause: %1 cannot be scheduled for a reason outside the GPU checks</source>
        <translation>Keine bekannte Ursache: %1 kann aus einem Grund außerhalb der GPU-Prüfungen nicht eingeplant werden</translation>
    </message>
    <message>
        <source>the head pod</source>
        <translation>den Head-Pod</translation>
    </message>
    <message>
        <source>a worker pod</source>
        <translation>einen Worker-Pod</translation>
    </message>
    <message>
        <source>the submitter pod</source>
        <translation>den Submitter-Pod</translation>
    </message>
    <message>
        <source>The API server refused to create %1, so it does not exist: %2</source>
        <translation>Der API-Server hat sich geweigert, %1 zu erstellen, daher existiert er nicht: %2</translation>
    </message>
    <message>
        <source>%1: asks %2, %3 already used of %4</source>
        <translation>%1: fordert %2 an, %3 von %4 bereits belegt</translation>
    </message>
    <message>
        <source>?</source>
        <translation>?</translation>
    </message>
    <message>
        <source>ResourceQuota %1%2 does not allow %3 (%4), so the API server refused to create it. Ask for less, wait for other pods of the namespace to finish, or ask the cluster's administrator to raise the quota</source>
        <translation>ResourceQuota %1%2 erlaubt %3 nicht (%4), daher hat der API-Server die Erstellung verweigert. Fordern Sie weniger an, warten Sie, bis andere Pods des Namespace beendet sind, oder bitten Sie den Administrator des Clusters, die Quota zu erhöhen</translation>
    </message>
    <message>
        <source> in namespace %1</source>
        <translation> im Namespace %1</translation>
    </message>
    <message>
        <source>no pods</source>
        <translation>keine Pods</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message numerus="yes">
        <source>%n pod(s)</source>
        <translation><numerusform>%n Pod</numerusform><numerusform>%n Pods</numerusform></translation>
    </message>
    <message>
        <source>No known cause found: </source>
        <translation>Keine bekannte Ursache gefunden: </translation>
    </message>
    <message>
        <source>; </source>
        <translation>; </translation>
    </message>
    <message>
        <source>Job %1 did not reach Running within its pre-running deadline</source>
        <translation>Job %1 erreichte Running nicht innerhalb seiner Startfrist</translation>
    </message>
    <message>
        <source> and was failed</source>
        <translation> und wurde als fehlgeschlagen beendet</translation>
    </message>
    <message>
        <source>. Before that: </source>
        <translation>. Zuvor: </translation>
    </message>
    <message>
        <source>Job %1 was never handed to Ray: its submitter gave up</source>
        <translation>Job %1 wurde nie an Ray übergeben: Sein Submitter hat aufgegeben</translation>
    </message>
    <message>
        <source> after %1</source>
        <translation> nach %1</translation>
    </message>
    <message numerus="yes">
        <source>%n failed pod(s)</source>
        <translation><numerusform>%n fehlgeschlagenen Pod</numerusform><numerusform>%n fehlgeschlagenen Pods</numerusform></translation>
    </message>
    <message>
        <source>, the last exiting with code %1</source>
        <translation>, der letzte wurde mit Exit-Code %1 beendet</translation>
    </message>
    <message>
        <source>the head pod %1</source>
        <translation>Head-Pod %1</translation>
    </message>
    <message>
        <source>the worker %1 pod %2</source>
        <translation>Worker-Pod %2 (Gruppe %1)</translation>
    </message>
    <message>
        <source>the submitter pod %1</source>
        <translation>Submitter-Pod %1</translation>
    </message>
    <message>
        <source>pod %1</source>
        <translation>Pod %1</translation>
    </message>
    <message>
        <source>the %1 pod %2</source>
        <translation>%1-Pod %2</translation>
    </message>
    <message>
        <source>. Kubelet: %1</source>
        <translation>. Kubelet: %1</translation>
    </message>
    <message>
        <source>a node</source>
        <translation>einem Knoten</translation>
    </message>
    <message>
        <source>one %1 node</source>
        <translation>einem %1-Knoten</translation>
    </message>
    <message>
        <source>. Scheduler: %1</source>
        <translation>. Scheduler: %1</translation>
    </message>
    <message>
        <source> of %1 s</source>
        <translation> von %1 s</translation>
    </message>
</context>
<context>
    <name>Digest</name>
    <message>
        <source>cannot read %1 to hash it: %2</source>
        <translation>%1 kann zum Hashen nicht gelesen werden: %2</translation>
    </message>
</context>
<context>
    <name>EffectiveConfig</name>
    <message>
        <source>unset</source>
        <translation>nicht gesetzt</translation>
    </message>
    <message>
        <source>default</source>
        <translation>Standard</translation>
    </message>
    <message>
        <source>profile</source>
        <translation>Profil</translation>
    </message>
    <message>
        <source>environment</source>
        <translation>Umgebung</translation>
    </message>
    <message>
        <source>keychain</source>
        <translation>Schlüsselbund</translation>
    </message>
    <message>
        <source>environment variable %1</source>
        <extracomment>%1: the problem, starting with the variable's name ("FORGE_K8S_SHM_SIZE: ...")</extracomment>
        <translation>Umgebungsvariable %1</translation>
    </message>
</context>
<context>
    <name>ExecPlugin</name>
    <message>
        <source>the exec plugin asks for client.authentication.k8s.io/v1alpha1, which Kubernetes removed in 1.24; use v1 (or v1beta1) in the kubeconfig's user.exec.apiVersion</source>
        <translation>das Exec-Plugin verlangt client.authentication.k8s.io/v1alpha1, das Kubernetes mit 1.24 entfernt hat; verwenden Sie v1 (oder v1beta1) in user.exec.apiVersion der kubeconfig</translation>
    </message>
    <message>
        <source>the exec plugin's apiVersion must be %1 or %2, not '%3'</source>
        <translation>die apiVersion des Exec-Plugins muss %1 oder %2 sein, nicht '%3'</translation>
    </message>
    <message>
        <source>the exec plugin has no command; give the program that prints the credential</source>
        <translation>das Exec-Plugin hat keinen Befehl; geben Sie das Programm an, das die Anmeldedaten ausgibt</translation>
    </message>
    <message>
        <source>the exec plugin's args must be a list of strings</source>
        <translation>args des Exec-Plugins muss eine Liste von Zeichenketten sein</translation>
    </message>
    <message>
        <source>the exec plugin's env must be a list of {name, value}</source>
        <translation>env des Exec-Plugins muss eine Liste von {name, value} sein</translation>
    </message>
    <message>
        <source>every entry of the exec plugin's env needs a name (without '=') and a value</source>
        <translation>jeder Eintrag in env des Exec-Plugins benötigt einen Namen (ohne '=') und einen Wert</translation>
    </message>
    <message>
        <source>the exec plugin's interactiveMode must be Never, IfAvailable or Always, not '%1'</source>
        <translation>interactiveMode des Exec-Plugins muss Never, IfAvailable oder Always sein, nicht '%1'</translation>
    </message>
    <message>
        <source>the exec plugin is not a JSON object (%1); write it as the kubeconfig's user.exec in JSON, e.g. {"apiVersion": "%2", "command": "aws", "args": ["eks", "get-token"]}</source>
        <translation>das Exec-Plugin ist kein JSON-Objekt (%1); schreiben Sie es wie user.exec der kubeconfig in JSON, z. B. {"apiVersion": "%2", "command": "aws", "args": ["eks", "get-token"]}</translation>
    </message>
    <message>
        <source>not an object</source>
        <translation>kein Objekt</translation>
    </message>
</context>
<context>
    <name>HydraOverride</name>
    <message>
        <source>"%1" has an empty key: Hydra's grammar lets it through, but no config has one (write key=value, e.g. grpo.max_num_steps=10).</source>
        <translation>"%1" hat einen leeren Schlüssel: Die Grammatik von Hydra lässt ihn zu, aber keine Konfiguration hat einen (schreiben Sie key=value, z. B. grpo.max_num_steps=10).</translation>
    </message>
    <message>
        <source>quote the value: %1%2, or escape the character with \</source>
        <translation>setzen Sie den Wert in Anführungszeichen: %1%2, oder maskieren Sie das Zeichen mit \</translation>
    </message>
    <message>
        <source>write key=value, +key=value, ++key=value or ~key; a key is like grpo.max_num_steps, server/db or db@package: letters, digits, '_', '-', '$' and '.', no spaces</source>
        <translation>schreiben Sie key=value, +key=value, ++key=value oder ~key; ein Schlüssel sieht aus wie grpo.max_num_steps, server/db oder db@package: Buchstaben, Ziffern, '_', '-', '$' und '.', keine Leerzeichen</translation>
    </message>
    <message>
        <source>Hydra cannot parse "%1": %2 (character %3; %4).</source>
        <translation>Hydra kann "%1" nicht parsen: %2 (Zeichen %3; %4).</translation>
    </message>
    <message>
        <source>Hydra cannot parse "%1": Trying to parse a primitive that is all whitespaces (character %2; quote it).</source>
        <translation>Hydra kann "%1" nicht parsen: Trying to parse a primitive that is all whitespaces (Zeichen %2; setzen Sie es in Anführungszeichen).</translation>
    </message>
    <message>
        <source>"%1" is a sweep over %2 values (Hydra: Ambiguous value for argument '%1'); sweeps are for --multirun and a job runs once: for a list write %3[%4], for a string quote it: %3%5.</source>
        <translation>"%1" ist ein Sweep über %2 Werte (Hydra: Ambiguous value for argument '%1'); Sweeps sind für --multirun gedacht, und ein Job läuft einmal: Schreiben Sie für eine Liste %3[%4], für einen String setzen Sie ihn in Anführungszeichen: %3%5.</translation>
    </message>
    <message>
        <source>"%1" is a sweep (%2; Hydra: Sweep parameters '%1' requires --multirun); sweeps are for --multirun and a job runs once: give one value.</source>
        <translation>"%1" ist ein Sweep (%2; Hydra: Sweep parameters '%1' requires --multirun); Sweeps sind für --multirun gedacht, und ein Job läuft einmal: Geben Sie einen einzelnen Wert an.</translation>
    </message>
    <message>
        <source>"%1" holds a sweep inside a list or dict; sweeps are for --multirun and a job runs once: give one value.</source>
        <translation>"%1" enthält einen Sweep in einer Liste oder einem Dict; Sweeps sind für --multirun gedacht, und ein Job läuft einmal: Geben Sie einen einzelnen Wert an.</translation>
    </message>
</context>
<context>
    <name>IgnoreRules</name>
    <message>
        <source>%1 (exclude pattern)</source>
        <translation>%1 (Ausschlussmuster)</translation>
    </message>
    <message>
        <source>%1 (.gitignore in %2/)</source>
        <translation>%1 (.gitignore in %2/)</translation>
    </message>
</context>
<context>
    <name>Informer</name>
    <message>
        <source>"items" is not a list</source>
        <translation>"items" ist keine Liste</translation>
    </message>
    <message>
        <source>an item of the list does not end where its object does</source>
        <translation>ein Eintrag der Liste endet nicht dort, wo sein Objekt endet</translation>
    </message>
</context>
<context>
    <name>JobRecord</name>
    <message>
        <source>%1 (being deleted)</source>
        <translation>%1 (wird gelöscht)</translation>
    </message>
    <message>
        <source>Stopping (being deleted)</source>
        <translation>Stopping (wird gelöscht)</translation>
    </message>
    <message>
        <source>not a Starforge job record (format is "%1", expected "starforge-job/1")</source>
        <translation>kein Starforge-Job-Eintrag (Format ist "%1", erwartet "starforge-job/1")</translation>
    </message>
    <message>
        <source>a job record without an id or a known state</source>
        <translation>ein Job-Eintrag ohne ID oder bekannten Zustand</translation>
    </message>
</context>
<context>
    <name>JobSnapshot</name>
    <message>
        <source>find job %1</source>
        <translation>Job %1 finden</translation>
    </message>
    <message>
        <source>list the job's pods</source>
        <translation>die Pods des Jobs auflisten</translation>
    </message>
    <message>
        <source>list events</source>
        <translation>Ereignisse auflisten</translation>
    </message>
    <message>
        <source>unexpected answer from the API server</source>
        <translation>unerwartete Antwort vom API-Server</translation>
    </message>
    <message>
        <source>read the submitter's log</source>
        <translation>das Log des Submitters lesen</translation>
    </message>
</context>
<context>
    <name>JobSpec</name>
    <message>
        <source>%1%2: unknown field; known fields are %3.</source>
        <translation>%1%2: unbekanntes Feld; bekannte Felder sind %3.</translation>
    </message>
    <message>
        <source>an object</source>
        <translation>ein Objekt</translation>
    </message>
    <message>
        <source>%1%2: required.</source>
        <translation>%1%2: erforderlich.</translation>
    </message>
    <message>
        <source>%1%2: must be a string, not %3.</source>
        <translation>%1%2: muss ein String sein, nicht %3.</translation>
    </message>
    <message>
        <source>%1%2: must be a whole number, not %3.</source>
        <translation>%1%2: muss eine ganze Zahl sein, nicht %3.</translation>
    </message>
    <message>
        <source>%1%2: must be true or false, not %3.</source>
        <translation>%1%2: muss true oder false sein, nicht %3.</translation>
    </message>
    <message>
        <source>%1%2: must be a list of strings, not %3.</source>
        <translation>%1%2: muss eine Liste von Strings sein, nicht %3.</translation>
    </message>
    <message>
        <source>%1%2[%3]: must be a string, not %4.</source>
        <translation>%1%2[%3]: muss ein String sein, nicht %4.</translation>
    </message>
    <message>
        <source>its config has no policy.generation, so the generation pool's overrides would make a partial one that NeMo-RL's config check refuses (backend and max_new_tokens missing), after the job has waited for its GPUs.</source>
        <translation>seine Konfiguration hat kein policy.generation, daher würden die Überschreibungen des Generierungs-Pools ein unvollständiges erzeugen, das die Konfigurationsprüfung von NeMo-RL ablehnt (backend und max_new_tokens fehlen), nachdem der Job auf seine GPUs gewartet hat.</translation>
    </message>
    <message>
        <source>NeMo-RL's PPO requires colocated generation (it asserts policy.generation.colocated.enabled).</source>
        <translation>PPO von NeMo-RL erfordert kolokierte Generierung (es setzt policy.generation.colocated.enabled per Assertion voraus).</translation>
    </message>
    <message>
        <source>the config %1 sets policy.generation.backend: %2</source>
        <translation>die Konfiguration %1 setzt policy.generation.backend: %2</translation>
    </message>
    <message>
        <source>the overrides set policy.generation.backend=%1</source>
        <translation>die Überschreibungen setzen policy.generation.backend=%1</translation>
    </message>
    <message>
        <source>it asserts "Non-colocated inference is not supported for Megatron generation backends. Please use vLLM backend for generation."</source>
        <translation>sie bricht mit der Assertion "Non-colocated inference is not supported for Megatron generation backends. Please use vLLM backend for generation." ab</translation>
    </message>
    <message>
        <source>its setup makes a generation engine for vllm and megatron only</source>
        <translation>ihr Setup erzeugt nur für vllm und megatron eine Generierungs-Engine</translation>
    </message>
    <message>
        <source>NeMo-RL's distillation generates on a separate pool only with the vLLM backend (%1), and %2.</source>
        <translation>Die Distillation von NeMo-RL generiert nur mit dem vLLM-Backend auf einem separaten Pool (%1), und %2.</translation>
    </message>
    <message>
        <source>The JobSpec is not valid JSON: %1 at byte %2.</source>
        <translation>Die JobSpec ist kein gültiges JSON: %1 bei Byte %2.</translation>
    </message>
    <message>
        <source>The JobSpec must be a JSON object.</source>
        <translation>Die JobSpec muss ein JSON-Objekt sein.</translation>
    </message>
    <message>
        <source>version: required; this app writes and reads version %1.</source>
        <translation>version: erforderlich; diese App schreibt und liest Version %1.</translation>
    </message>
    <message>
        <source>version: %1 is not supported; this app reads version %2.</source>
        <translation>version: %1 wird nicht unterstützt; diese App liest Version %2.</translation>
    </message>
    <message>
        <source>recipe: required, an object with algorithm (or script), config and overrides.</source>
        <translation>recipe: erforderlich, ein Objekt mit algorithm (oder script), config und overrides.</translation>
    </message>
    <message>
        <source>env.%1: must be a string (quote numbers), not %2.</source>
        <translation>env.%1: muss ein String sein (Zahlen in Anführungszeichen setzen), nicht %2.</translation>
    </message>
    <message>
        <source>env: must be an object of names to strings, not %1.</source>
        <translation>env: muss ein Objekt sein, das Namen auf Strings abbildet, nicht %1.</translation>
    </message>
    <message>
        <source>secretEnv.%1: must be {"secret": NAME, "key": KEY} naming a Kubernetes Secret, not %2; the value itself never goes in the JobSpec.</source>
        <translation>secretEnv.%1: muss {"secret": NAME, "key": KEY} sein und ein Kubernetes-Secret benennen, nicht %2; der Wert selbst kommt nie in die JobSpec.</translation>
    </message>
    <message>
        <source>secretEnv: must be an object of names to {"secret": NAME, "key": KEY}, not %1.</source>
        <translation>secretEnv: muss ein Objekt sein, das Namen auf {"secret": NAME, "key": KEY} abbildet, nicht %1.</translation>
    </message>
    <message>
        <source>pools: required, a list like [{"name": "train", "series": "h200", "nodes": 1, "gpusPerNode": 8}].</source>
        <translation>pools: erforderlich, eine Liste wie [{"name": "train", "series": "h200", "nodes": 1, "gpusPerNode": 8}].</translation>
    </message>
    <message>
        <source>pools[%1]: must be an object, not %2.</source>
        <translation>pools[%1]: muss ein Objekt sein, nicht %2.</translation>
    </message>
    <message>
        <source>name: "%1" must be 1-%2 characters of lowercase letters, digits and '-', start with a letter and end with a letter or digit (it becomes the RayJob's name).</source>
        <translation>name: "%1" muss aus 1-%2 Zeichen bestehen (Kleinbuchstaben, Ziffern und '-'), mit einem Buchstaben beginnen und mit einem Buchstaben oder einer Ziffer enden (er wird zum Namen des RayJobs).</translation>
    </message>
    <message>
        <source>code: must name the code folder ("." for the JobSpec's own folder).</source>
        <translation>code: muss den Code-Ordner benennen ("." für den Ordner der JobSpec selbst).</translation>
    </message>
    <message>
        <source>recipe: give either algorithm (%1) or script, not both or neither.</source>
        <translation>recipe: Geben Sie entweder algorithm (%1) oder script an, nicht beides oder keines.</translation>
    </message>
    <message>
        <source>recipe.algorithm: "%1" is not one of %2; use script for another entry point.</source>
        <translation>recipe.algorithm: "%1" ist keiner von %2; verwenden Sie script für einen anderen Einstiegspunkt.</translation>
    </message>
    <message>
        <source>recipe.script: "%1" must be a .py path without "..".</source>
        <translation>recipe.script: "%1" muss ein .py-Pfad ohne ".." sein.</translation>
    </message>
    <message>
        <source>recipe.config: required, the YAML config inside the code folder.</source>
        <translation>recipe.config: erforderlich, die YAML-Konfiguration im Code-Ordner.</translation>
    </message>
    <message>
        <source>recipe.config: "%1" must be a path inside the code folder (relative, without ".."), since it ships in the Capsule.</source>
        <translation>recipe.config: "%1" muss ein Pfad im Code-Ordner sein (relativ, ohne ".."), da er in der Capsule mitgeliefert wird.</translation>
    </message>
    <message>
        <source>recipe.overrides[%1]: must be one line.</source>
        <translation>recipe.overrides[%1]: muss eine einzelne Zeile sein.</translation>
    </message>
    <message>
        <source>recipe.overrides[%1]: %2</source>
        <translation>recipe.overrides[%1]: %2</translation>
    </message>
    <message>
        <source>env.%1: not a valid environment variable name (letters, digits, '_', not starting with a digit).</source>
        <translation>env.%1: kein gültiger Name für eine Umgebungsvariable (Buchstaben, Ziffern, '_', nicht mit einer Ziffer beginnend).</translation>
    </message>
    <message>
        <source>env.%1: names starting with RAY_ or FORGE_ are set by Ray and Starforge; choose another name.</source>
        <translation>env.%1: Namen, die mit RAY_ oder FORGE_ beginnen, werden von Ray und Starforge gesetzt; wählen Sie einen anderen Namen.</translation>
    </message>
    <message>
        <source>secretEnv.%1: not a valid environment variable name (letters, digits, '_', not starting with a digit).</source>
        <translation>secretEnv.%1: kein gültiger Name für eine Umgebungsvariable (Buchstaben, Ziffern, '_', nicht mit einer Ziffer beginnend).</translation>
    </message>
    <message>
        <source>secretEnv.%1: names starting with RAY_ or FORGE_ are set by Ray and Starforge; choose another name.</source>
        <translation>secretEnv.%1: Namen, die mit RAY_ oder FORGE_ beginnen, werden von Ray und Starforge gesetzt; wählen Sie einen anderen Namen.</translation>
    </message>
    <message>
        <source>secretEnv.%1: also set in env; give it in one of them.</source>
        <translation>secretEnv.%1: auch in env gesetzt; geben Sie die Variable nur in einem von beiden an.</translation>
    </message>
    <message>
        <source>secretEnv.%1.secret: "%2" is not a Secret name (lowercase letters, digits, '-' and '.').</source>
        <translation>secretEnv.%1.secret: "%2" ist kein Secret-Name (Kleinbuchstaben, Ziffern, '-' und '.').</translation>
    </message>
    <message>
        <source>secretEnv.%1.key: "%2" is not a Secret key (letters, digits, '-', '_' and '.').</source>
        <translation>secretEnv.%1.key: "%2" ist kein Secret-Schlüssel (Buchstaben, Ziffern, '-', '_' und '.').</translation>
    </message>
    <message>
        <source>pools: at least one pool is needed (the first is where the Ray head runs).</source>
        <translation>pools: Mindestens ein Pool ist erforderlich (im ersten läuft der Ray-Head).</translation>
    </message>
    <message>
        <source>pools: at most two pools, training and generation (NeMo-RL's non-colocated generation); %1 given.</source>
        <translation>pools: höchstens zwei Pools, Training und Generierung (nicht-kolokierte Generierung von NeMo-RL); %1 angegeben.</translation>
    </message>
    <message>
        <source>pools[%1].name: "%2" must be 1-15 lowercase letters, digits or '-' (it names the worker group).</source>
        <translation>pools[%1].name: "%2" muss aus 1-15 Kleinbuchstaben, Ziffern oder '-' bestehen (er benennt die Worker-Gruppe).</translation>
    </message>
    <message>
        <source>pools[%1].name: "%2" is used twice.</source>
        <translation>pools[%1].name: "%2" wird doppelt verwendet.</translation>
    </message>
    <message>
        <source>pools[%1].series: "%2" is not a node label value (up to 63 letters, digits, '-', '_', '.').</source>
        <translation>pools[%1].series: "%2" ist kein gültiger Wert für ein Knoten-Label (bis zu 63 Buchstaben, Ziffern, '-', '_', '.').</translation>
    </message>
    <message>
        <source>pools[%1].nodes: must be between 1 and 1024, not %2.</source>
        <translation>pools[%1].nodes: muss zwischen 1 und 1024 liegen, nicht %2.</translation>
    </message>
    <message>
        <source>pools[%1].gpusPerNode: must be between 1 and 64, not %2.</source>
        <translation>pools[%1].gpusPerNode: muss zwischen 1 und 64 liegen, nicht %2.</translation>
    </message>
    <message>
        <source>pools[1]: %1 takes one pool; %2 Remove the second pool, or choose grpo, vlm_grpo or distillation.</source>
        <translation>pools[1]: %1 verwendet nur einen Pool; %2 Entfernen Sie den zweiten Pool oder wählen Sie grpo, vlm_grpo oder distillation.</translation>
    </message>
    <message>
        <source>pools[1].gpusPerNode: must equal pools[0].gpusPerNode (%1): NeMo-RL requires dedicated generation nodes to have as many GPUs as the training nodes.</source>
        <translation>pools[1].gpusPerNode: muss gleich pools[0].gpusPerNode (%1) sein: NeMo-RL verlangt, dass dedizierte Generierungsknoten so viele GPUs haben wie die Trainingsknoten.</translation>
    </message>
    <message>
        <source>pools: training on %1 and generation on %2 is a request Ray may not honour: NeMo-RL's placement groups ask only for CPUs and GPUs, so training can land on the %2 nodes and generation on the %1 nodes. Pools of one series are exact.</source>
        <translation>pools: Training auf %1 und Generierung auf %2 ist eine Anforderung, die Ray möglicherweise nicht einhält: Die Placement Groups von NeMo-RL fordern nur CPUs und GPUs an, daher kann das Training auf den %2-Knoten und die Generierung auf den %1-Knoten landen. Pools einer einzigen Serie sind exakt.</translation>
    </message>
    <message>
        <source>pools: this job runs on %1 nodes, but the storage is not shared between nodes (FORGE_K8S_STORAGE_SHARED=false): checkpoints written on one node would be missing on the others. Use one node, or a ReadWriteMany volume and set FORGE_K8S_STORAGE_SHARED=true.</source>
        <translation>pools: Dieser Job läuft auf %1 Knoten, aber der Speicher wird nicht zwischen Knoten geteilt (FORGE_K8S_STORAGE_SHARED=false): Auf einem Knoten geschriebene Checkpoints würden auf den anderen fehlen. Verwenden Sie einen Knoten oder ein ReadWriteMany-Volume und setzen Sie FORGE_K8S_STORAGE_SHARED=true.</translation>
    </message>
    <message>
        <source>corpus: the job asks for the corpus volume, but the profile has none; set FORGE_K8S_CORPUS_PVC or set corpus to false.</source>
        <translation>corpus: Der Job fordert das Korpus-Volume an, aber das Profil hat keines; setzen Sie FORGE_K8S_CORPUS_PVC oder setzen Sie corpus auf false.</translation>
    </message>
    <message>
        <source>Cannot read the JobSpec %1: %2.</source>
        <translation>Die JobSpec %1 kann nicht gelesen werden: %2.</translation>
    </message>
    <message>
        <source>The JobSpec %1 is larger than 4 MiB; it should describe the job, not carry data.</source>
        <translation>Die JobSpec %1 ist größer als 4 MiB; sie sollte den Job beschreiben, nicht Daten transportieren.</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>%1: code: the folder %2 does not exist (paths are relative to the JobSpec's folder).</source>
        <translation>%1: code: Der Ordner %2 existiert nicht (Pfade sind relativ zum Ordner der JobSpec).</translation>
    </message>
    <message>
        <source>%1: recipe.config: %2 is not a file in the code folder %3.</source>
        <translation>%1: recipe.config: %2 ist keine Datei im Code-Ordner %3.</translation>
    </message>
    <message numerus="yes">
        <source>The JobSpec has %n problem(s):</source>
        <translation><numerusform>Die JobSpec hat %n Problem:</numerusform><numerusform>Die JobSpec hat %n Probleme:</numerusform></translation>
    </message>
</context>
<context>
    <name>Jobactions</name>
    <message>
        <source>RayJob %1 was not made by Starforge (it lacks the %2=%3 label); Starforge does not %4 it (kubectl delete rayjob %1 -n %5 would)</source>
        <translation>RayJob %1 wurde nicht von Starforge erstellt (ihm fehlt das Label %2=%3); Starforge kann ihn nicht %4 (mit kubectl delete rayjob %1 -n %5 ist es möglich)</translation>
    </message>
    <message>
        <source>Could not read job %1: the server's answer is not a RayJob. Is FORGE_K8S_API_SERVER the cluster's API server?</source>
        <translation>Job %1 konnte nicht gelesen werden: Die Antwort des Servers ist kein RayJob. Ist FORGE_K8S_API_SERVER der API-Server des Clusters?</translation>
    </message>
    <message>
        <source>job %1 is neither on the cluster nor in the job history</source>
        <translation>Job %1 ist weder im Cluster noch im Job-Verlauf</translation>
    </message>
    <message>
        <source>mark RayJob %1 for deletion</source>
        <translation>RayJob %1 zum Löschen markieren</translation>
    </message>
</context>
<context>
    <name>Kube</name>
    <message>
        <source>The cluster did not accept the token (401 Unauthorized) when trying to %1. The token is wrong or has expired: set a current one in the profile (FORGE_K8S_TOKEN).</source>
        <translation>Der Cluster hat das Token nicht akzeptiert (401 Unauthorized; Vorgang: %1). Das Token ist falsch oder abgelaufen: Legen Sie im Profil ein gültiges fest (FORGE_K8S_TOKEN).</translation>
    </message>
    <message>
        <source>Not allowed to %1: %2. Ask the cluster's administrator for this permission (see docs/kubernetes.md for the Role Starforge needs).</source>
        <translation>Nicht erlaubt (%1): %2. Bitten Sie den Administrator des Clusters um diese Berechtigung (siehe docs/kubernetes.md für die Role, die Starforge benötigt).</translation>
    </message>
    <message>
        <source>403 Forbidden</source>
        <translation>403 Forbidden</translation>
    </message>
    <message>
        <source>Could not %1: not found on the server.</source>
        <translation>Vorgang fehlgeschlagen (%1): auf dem Server nicht gefunden.</translation>
    </message>
    <message>
        <source>Could not %1: %2.</source>
        <translation>Vorgang fehlgeschlagen (%1): %2.</translation>
    </message>
    <message>
        <source>The server's history no longer reaches back far enough to %1 (%2); starting over.</source>
        <translation>Der Verlauf des Servers reicht nicht mehr weit genug zurück (Vorgang: %1; %2); es wird von vorn begonnen.</translation>
    </message>
    <message>
        <source>The API server is rate-limiting requests (429) while trying to %1; retrying later.</source>
        <translation>Der API-Server begrenzt die Anfragerate (429; Vorgang: %1); es wird später erneut versucht.</translation>
    </message>
    <message>
        <source>The API server failed (%1) while trying to %2%3.</source>
        <translation>Fehler des API-Servers (%1), Vorgang: %2%3.</translation>
    </message>
    <message>
        <source>Could not %1: %2</source>
        <translation>Vorgang fehlgeschlagen (%1): %2</translation>
    </message>
    <message>
        <source>HTTP %1</source>
        <translation>HTTP %1</translation>
    </message>
    <message>
        <source>Cannot read %1: %2.</source>
        <translation>%1 kann nicht gelesen werden: %2.</translation>
    </message>
    <message>
        <source>%1 gives a client key but no certificate; set FORGE_K8S_CLIENT_CERT_FILE or FORGE_K8S_CLIENT_CERT_DATA.</source>
        <translation>%1 gibt einen Client-Schlüssel, aber kein Zertifikat an; setzen Sie FORGE_K8S_CLIENT_CERT_FILE oder FORGE_K8S_CLIENT_CERT_DATA.</translation>
    </message>
    <message>
        <source>%1 gives a client certificate but no key; set FORGE_K8S_CLIENT_KEY_FILE or FORGE_K8S_CLIENT_KEY_DATA (kept in the keychain).</source>
        <translation>%1 gibt ein Client-Zertifikat, aber keinen Schlüssel an; setzen Sie FORGE_K8S_CLIENT_KEY_FILE oder FORGE_K8S_CLIENT_KEY_DATA (im Schlüsselbund gespeichert).</translation>
    </message>
    <message>
        <source>ask the cluster who you are (SelfSubjectReview)</source>
        <translation>den Cluster fragen, wer Sie sind (SelfSubjectReview)</translation>
    </message>
    <message>
        <source>a watch event is not a JSON object (%1 at byte %2)</source>
        <translation>ein Watch-Ereignis ist kein JSON-Objekt (%1 bei Byte %2)</translation>
    </message>
    <message>
        <source>a watch event has the unknown type "%1"</source>
        <translation>ein Watch-Ereignis hat den unbekannten Typ "%1"</translation>
    </message>
    <message>
        <source>a %1 watch event carries no object</source>
        <translation>ein %1-Watch-Ereignis enthält kein Objekt</translation>
    </message>
    <message>
        <source>a watch event is longer than %1 MiB</source>
        <translation>ein Watch-Ereignis ist länger als %1 MiB</translation>
    </message>
    <message>
        <source>The API server's answer to %1 could not be read: %2.</source>
        <translation>Die Antwort des API-Servers (%1) konnte nicht gelesen werden: %2.</translation>
    </message>
    <message>
        <source>No API server is set. Set FORGE_K8S_API_SERVER in the profile, or import a kubeconfig context.</source>
        <translation>Kein API-Server festgelegt. Setzen Sie FORGE_K8S_API_SERVER im Profil oder importieren Sie einen kubeconfig-Kontext.</translation>
    </message>
    <message>
        <source>FORGE_K8S_API_SERVER "%1" is not an http(s) URL with a host.</source>
        <translation>FORGE_K8S_API_SERVER "%1" ist keine http(s)-URL mit Host.</translation>
    </message>
    <message>
        <source>FORGE_K8S_API_SERVER "%1" is plain http:// to another machine, which would send the token unencrypted. Use the server's https:// address, or run `kubectl proxy` and give http://127.0.0.1:8001.</source>
        <translation>FORGE_K8S_API_SERVER "%1" ist unverschlüsseltes http:// zu einem anderen Rechner, wodurch das Token unverschlüsselt gesendet würde. Verwenden Sie die https://-Adresse des Servers oder führen Sie `kubectl proxy` aus und geben Sie http://127.0.0.1:8001 an.</translation>
    </message>
    <message>
        <source>FORGE_K8S_EXEC: %1</source>
        <translation>FORGE_K8S_EXEC: %1</translation>
    </message>
    <message>
        <source>Cannot read the token file %1 (FORGE_K8S_TOKEN_FILE): %2.</source>
        <translation>Die Token-Datei %1 (FORGE_K8S_TOKEN_FILE) kann nicht gelesen werden: %2.</translation>
    </message>
    <message>
        <source>No credential is set for %1. Import a kubeconfig context, or set FORGE_K8S_TOKEN (kept in the keychain), FORGE_K8S_TOKEN_FILE, a client certificate and key (FORGE_K8S_CLIENT_CERT_FILE and FORGE_K8S_CLIENT_KEY_FILE) or an exec plugin (FORGE_K8S_EXEC).</source>
        <translation>Für %1 sind keine Anmeldedaten festgelegt. Importieren Sie einen kubeconfig-Kontext oder setzen Sie FORGE_K8S_TOKEN (im Schlüsselbund gespeichert), FORGE_K8S_TOKEN_FILE, ein Client-Zertifikat mit Schlüssel (FORGE_K8S_CLIENT_CERT_FILE und FORGE_K8S_CLIENT_KEY_FILE) oder ein Exec-Plugin (FORGE_K8S_EXEC).</translation>
    </message>
    <message>
        <source>Could not %1: the API server's answer is larger than %2 MiB, the most Starforge reads into memory. Ask for less (a label selector, a smaller page, tailLines).</source>
        <translation>Vorgang fehlgeschlagen (%1): Die Antwort des API-Servers ist größer als %2 MiB, das Maximum, das Starforge in den Speicher liest. Fordern Sie weniger an (ein Label-Selektor, eine kleinere Seite, tailLines).</translation>
    </message>
    <message>
        <source>Could not %1: writing it to disk failed (%2). Free some space in the temporary folder and try again.</source>
        <translation>Vorgang fehlgeschlagen (%1): Das Schreiben auf die Festplatte ist fehlgeschlagen (%2). Geben Sie im temporären Ordner Speicherplatz frei und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>The API server closed the connection without an answer.</source>
        <translation>Der API-Server hat die Verbindung ohne Antwort geschlossen.</translation>
    </message>
</context>
<context>
    <name>Kubeconfig</name>
    <message>
        <source>%1 and %2</source>
        <translation>%1 und %2</translation>
    </message>
    <message>
        <source>the kubeconfig %1 does not exist; give its path, e.g. ~/.kube/config</source>
        <translation>die kubeconfig %1 existiert nicht; geben Sie ihren Pfad an, z. B. ~/.kube/config</translation>
    </message>
    <message>
        <source>cannot read the kubeconfig %1: %2</source>
        <translation>die kubeconfig %1 kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <source>none of the kubeconfig files exist: %1</source>
        <translation>keine der kubeconfig-Dateien existiert: %1</translation>
    </message>
    <message>
        <source>the kubeconfig</source>
        <translation>die kubeconfig</translation>
    </message>
    <message>
        <source>%1 is not a kubeconfig: its top level is not a mapping</source>
        <translation>%1 ist keine kubeconfig: Die oberste Ebene ist kein Mapping</translation>
    </message>
    <message>
        <source>the auth provider '%1'</source>
        <translation>Auth-Provider '%1'</translation>
    </message>
    <message>
        <source>basic authentication (username and password)</source>
        <translation>Basic-Authentifizierung (Benutzername und Passwort)</translation>
    </message>
    <message>
        <source>%1 is not valid YAML: %2</source>
        <translation>%1 ist kein gültiges YAML: %2</translation>
    </message>
    <message>
        <source>the kubeconfig has no current-context; choose one of: %1</source>
        <translation>die kubeconfig hat keinen current-context; wählen Sie einen aus: %1</translation>
    </message>
    <message>
        <source>the kubeconfig has no context '%1'; it has: %2</source>
        <translation>die kubeconfig hat keinen Kontext '%1'; vorhanden sind: %2</translation>
    </message>
    <message>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <source>context '%1' names the cluster '%2', which the kubeconfig does not define</source>
        <translation>Kontext '%1' verweist auf den Cluster '%2', den die kubeconfig nicht definiert</translation>
    </message>
    <message>
        <source>context '%1' names the user '%2', which the kubeconfig does not define</source>
        <translation>Kontext '%1' verweist auf den Benutzer '%2', den die kubeconfig nicht definiert</translation>
    </message>
    <message>
        <source>context '%1' signs in with %2, which Starforge does not support. Use a token, a client certificate or an exec credential plugin (what kubectl supports today).</source>
        <translation>Kontext '%1' meldet sich mit %2 an, was Starforge nicht unterstützt. Verwenden Sie ein Token, ein Client-Zertifikat oder ein Exec-Anmelde-Plugin (was kubectl heute unterstützt).</translation>
    </message>
    <message>
        <source>context '%1' gives user '%2' no token, client certificate or exec plugin; add one to the kubeconfig, or set FORGE_K8S_TOKEN after import</source>
        <translation>Kontext '%1': Benutzer '%2' hat weder ein Token noch ein Client-Zertifikat noch ein Exec-Plugin; fügen Sie eines davon in der kubeconfig hinzu oder setzen Sie nach dem Import FORGE_K8S_TOKEN</translation>
    </message>
    <message>
        <source>context '%1': user '%2' has a client certificate but no client key; kubectl needs both as well</source>
        <translation>Kontext '%1': Benutzer '%2' hat ein Client-Zertifikat, aber keinen Client-Schlüssel; auch kubectl benötigt beides</translation>
    </message>
    <message>
        <source>context '%1': user '%2' has a client key but no client certificate; kubectl needs both as well</source>
        <translation>Kontext '%1': Benutzer '%2' hat einen Client-Schlüssel, aber kein Client-Zertifikat; auch kubectl benötigt beides</translation>
    </message>
    <message>
        <source>the user also has %1, which Starforge ignores</source>
        <translation>der Benutzer nutzt außerdem %1; Starforge ignoriert dies</translation>
    </message>
    <message>
        <source>context '%1', %2: %3</source>
        <extracomment>%2: the kubeconfig field ("cluster 'c' server"), %3: what is wrong with its value</extracomment>
        <translation>Kontext '%1', %2: %3</translation>
    </message>
    <message>
        <source>%1 → %2</source>
        <translation>%1 → %2</translation>
    </message>
    <message>
        <source>%1 → %2 (in the keychain)</source>
        <translation>%1 → %2 (im Schlüsselbund)</translation>
    </message>
    <message>
        <source>cluster '%1' of context '%2' has no server URL</source>
        <translation>Cluster '%1' von Kontext '%2' hat keine Server-URL</translation>
    </message>
    <message>
        <source>cluster '%1' %2</source>
        <extracomment>%2: a kubeconfig field name (server, certificate-authority-data, ...), as written in the file</extracomment>
        <translation>Cluster '%1' %2</translation>
    </message>
    <message>
        <source>the cluster skips TLS verification (insecure-skip-tls-verify); the window will show a warning</source>
        <translation>der Cluster überspringt die TLS-Überprüfung (insecure-skip-tls-verify); das Fenster zeigt eine Warnung an</translation>
    </message>
    <message>
        <source>context '%1' namespace</source>
        <translation>Kontext '%1' namespace</translation>
    </message>
    <message>
        <source>user '%1' %2</source>
        <extracomment>%2: a kubeconfig field name (token, client-key-data, ...), as written in the file</extracomment>
        <translation>Benutzer '%1' %2</translation>
    </message>
    <message>
        <source>user '%1' client certificate</source>
        <translation>Client-Zertifikat von Benutzer '%1'</translation>
    </message>
    <message>
        <source>user '%1' client key</source>
        <translation>Client-Schlüssel von Benutzer '%1'</translation>
    </message>
    <message>
        <source>connecting will fail until this is fixed: %1</source>
        <translation>die Verbindung schlägt fehl, bis dies behoben ist: %1</translation>
    </message>
    <message>
        <source>signs in with the client certificate %1, valid until %2</source>
        <translation>Anmeldung mit dem Client-Zertifikat %1, gültig bis %2</translation>
    </message>
    <message>
        <source>signs in by running %1 when connecting and before its credential expires</source>
        <translation>Anmeldung durch Ausführen von %1 beim Verbinden und vor Ablauf der Anmeldedaten</translation>
    </message>
    <message>
        <source>the exec plugin's credential is used instead of the user's token</source>
        <translation>die Anmeldedaten des Exec-Plugins werden anstelle des Tokens des Benutzers verwendet</translation>
    </message>
</context>
<context>
    <name>LineIndex</name>
    <message>
        <source>Cannot read the log %1: %2.</source>
        <translation>Das Log %1 kann nicht gelesen werden: %2.</translation>
    </message>
    <message>
        <source>Cannot map the log %1: %2.</source>
        <translation>Das Log %1 kann nicht in den Speicher abgebildet werden: %2.</translation>
    </message>
    <message>
        <source>The log %1 changed while it was read; open it again.</source>
        <translation>Das Log %1 hat sich beim Lesen geändert; öffnen Sie es erneut.</translation>
    </message>
</context>
<context>
    <name>LogSearch</name>
    <message>
        <source>log search</source>
        <translation>Log-Suche</translation>
    </message>
    <message>
        <source>The expression %1 is not valid at character %2: %3.</source>
        <translation>Der Ausdruck %1 ist bei Zeichen %2 ungültig: %3.</translation>
    </message>
    <message>
        <source>Cannot read the log %1: %2.</source>
        <translation>Das Log %1 kann nicht gelesen werden: %2.</translation>
    </message>
    <message>
        <source>Cannot map the log %1 to search it: %2.</source>
        <translation>Das Log %1 kann für die Suche nicht in den Speicher abgebildet werden: %2.</translation>
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
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>&amp;Ansicht</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <source>Main toolbar</source>
        <translation>Hauptwerkzeugleiste</translation>
    </message>
    <message>
        <source>Connection &amp;Profiles…</source>
        <translation>Verbindungs&amp;profile…</translation>
    </message>
    <message>
        <source>Ctrl+Shift+P</source>
        <translation>Ctrl+Shift+P</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <source>Ctrl+Q</source>
        <translation>Ctrl+Q</translation>
    </message>
    <message>
        <source>&amp;About Starforge</source>
        <translation>&amp;Über Starforge</translation>
    </message>
    <message>
        <source>&amp;New Job…</source>
        <translation>&amp;Neuer Job…</translation>
    </message>
    <message>
        <source>Submit a training job: code folder, recipe, resources, review</source>
        <translation>Einen Trainingsjob einreichen: Code-Ordner, Rezept, Ressourcen, Überprüfung</translation>
    </message>
    <message>
        <source>Ctrl+N</source>
        <translation>Ctrl+N</translation>
    </message>
    <message>
        <source>&amp;Open JobSpec…</source>
        <translation>JobSpec ö&amp;ffnen…</translation>
    </message>
    <message>
        <source>Open a jobspec.json in the submission wizard</source>
        <translation>Eine jobspec.json im Einreichungsassistenten öffnen</translation>
    </message>
    <message>
        <source>Ctrl+O</source>
        <translation>Ctrl+O</translation>
    </message>
</context>
<context>
    <name>Net</name>
    <message>
        <source>%1 holds no PEM certificate. Give the cluster's CA certificate (-----BEGIN CERTIFICATE-----).</source>
        <translation>%1 enthält kein PEM-Zertifikat. Geben Sie das CA-Zertifikat des Clusters an (-----BEGIN CERTIFICATE-----).</translation>
    </message>
    <message>
        <source>Cannot read the CA file %1: %2.</source>
        <translation>Die CA-Datei %1 kann nicht gelesen werden: %2.</translation>
    </message>
    <message>
        <source>The CA file %1</source>
        <translation>Die CA-Datei %1</translation>
    </message>
    <message>
        <source>The proxy%1 in front of %2 failed: %3. Check that the proxy runs and the proxy setting (FORGE_K8S_PROXY_URL or FORGE_S3_PROXY, else HTTPS_PROXY and NO_PROXY in the environment).</source>
        <translation>Der Proxy%1 vor %2 ist fehlgeschlagen: %3. Prüfen Sie, ob der Proxy läuft, und die Proxy-Einstellung (FORGE_K8S_PROXY_URL oder FORGE_S3_PROXY, sonst HTTPS_PROXY und NO_PROXY in der Umgebung).</translation>
    </message>
    <message>
        <source>%1 refused the connection. Check the address and port, and that the server is running.</source>
        <translation>%1 hat die Verbindung abgelehnt. Prüfen Sie Adresse und Port und ob der Server läuft.</translation>
    </message>
    <message>
        <source>%1 closed the connection before answering. Check that the address is an HTTPS API endpoint.</source>
        <translation>%1 hat die Verbindung vor der Antwort geschlossen. Prüfen Sie, ob die Adresse ein HTTPS-API-Endpunkt ist.</translation>
    </message>
    <message>
        <source>The host %1 was not found. Check the server address.</source>
        <translation>Der Host %1 wurde nicht gefunden. Prüfen Sie die Serveradresse.</translation>
    </message>
    <message>
        <source>%1 did not answer in time. Check the network path to it (VPN, proxy, firewall).</source>
        <translation>%1 hat nicht rechtzeitig geantwortet. Prüfen Sie den Netzwerkpfad dorthin (VPN, Proxy, Firewall).</translation>
    </message>
    <message>
        <source>The request to %1 was cancelled or timed out.</source>
        <translation>Die Anfrage an %1 wurde abgebrochen oder hat das Zeitlimit überschritten.</translation>
    </message>
    <message>
        <source>The TLS certificate of %1 is not trusted: %2. Give the cluster's CA certificate (a CA file or CA data) in the profile.</source>
        <translation>Dem TLS-Zertifikat von %1 wird nicht vertraut: %2. Geben Sie das CA-Zertifikat des Clusters (eine CA-Datei oder CA-Daten) im Profil an.</translation>
    </message>
    <message>
        <source>The network is unavailable (%1). Check the connection.</source>
        <translation>Das Netzwerk ist nicht verfügbar (%1). Prüfen Sie die Verbindung.</translation>
    </message>
    <message>
        <source>The request to %1 failed: %2.</source>
        <translation>Die Anfrage an %1 ist fehlgeschlagen: %2.</translation>
    </message>
    <message>
        <source>%1 holds no PEM certificate (-----BEGIN CERTIFICATE-----).</source>
        <translation>%1 enthält kein PEM-Zertifikat (-----BEGIN CERTIFICATE-----).</translation>
    </message>
    <message>
        <source>%1 gives a client certificate but no key; set the client key too (client-key or client-key-data).</source>
        <translation>%1 gibt ein Client-Zertifikat, aber keinen Schlüssel an; setzen Sie auch den Client-Schlüssel (client-key oder client-key-data).</translation>
    </message>
    <message>
        <source>%1 is encrypted with a passphrase, which Starforge cannot ask for at every connection (kubectl cannot either). Store it unencrypted where only you can read it, e.g. `openssl pkey -in key.pem -out key-plain.pem &amp;&amp; chmod 600 key-plain.pem`.</source>
        <translation>%1 ist mit einer Passphrase verschlüsselt, die Starforge nicht bei jeder Verbindung abfragen kann (kubectl auch nicht). Speichern Sie den Schlüssel unverschlüsselt an einem Ort, den nur Sie lesen können, z. B. `openssl pkey -in key.pem -out key-plain.pem &amp;&amp; chmod 600 key-plain.pem`.</translation>
    </message>
    <message>
        <source>%1 holds no PEM private key (-----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY or EC PRIVATE KEY).</source>
        <translation>%1 enthält keinen privaten PEM-Schlüssel (-----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY oder EC PRIVATE KEY).</translation>
    </message>
    <message>
        <source>%1 is a %2 key; client certificates work with RSA and EC keys.</source>
        <translation>%1 ist ein %2-Schlüssel; Client-Zertifikate funktionieren mit RSA- und EC-Schlüsseln.</translation>
    </message>
    <message>
        <source>The client certificate in %1 (%2) does not belong to the key in %3: they were not issued together. Take both from the same kubeconfig user.</source>
        <translation>Das Client-Zertifikat in %1 (%2) gehört nicht zum Schlüssel in %3: Sie wurden nicht zusammen ausgestellt. Verwenden Sie beide vom selben kubeconfig-Benutzer.</translation>
    </message>
    <message>
        <source>The client certificate in %1 (%2) expired on %3. Get a new one from the cluster's administrator (kubeadm: `kubeadm certs renew`; kind and minikube write a fresh kubeconfig when the cluster starts).</source>
        <translation>Das Client-Zertifikat in %1 (%2) ist am %3 abgelaufen. Besorgen Sie sich ein neues beim Administrator des Clusters (kubeadm: `kubeadm certs renew`; kind und minikube schreiben beim Start des Clusters eine neue kubeconfig).</translation>
    </message>
    <message>
        <source>The client certificate in %1 (%2) is not valid before %3; check this machine's clock.</source>
        <translation>Das Client-Zertifikat in %1 (%2) ist erst ab %3 gültig; prüfen Sie die Uhr dieses Rechners.</translation>
    </message>
    <message>
        <source>The key in %1 could not be converted for the TLS library.</source>
        <translation>Der Schlüssel in %1 konnte nicht für die TLS-Bibliothek konvertiert werden.</translation>
    </message>
    <message>
        <source>The TLS library refused the key in %1.</source>
        <translation>Die TLS-Bibliothek hat den Schlüssel in %1 abgelehnt.</translation>
    </message>
</context>
<context>
    <name>Ownership</name>
    <message>
        <source>RayJob %1 carries the job id "%2", which is not one Starforge makes (six characters of bcdfghjklmnpqrstvwxz2456789); it is not followed.</source>
        <translation>RayJob %1 trägt die Job-ID "%2", die nicht von Starforge stammt (sechs Zeichen aus bcdfghjklmnpqrstvwxz2456789); er wird nicht verfolgt.</translation>
    </message>
    <message>
        <source>RayJob %1 is not named &lt;job name&gt;-&lt;job id&gt; (%2-%3) as Starforge names its jobs; it is not followed.</source>
        <translation>RayJob %1 heißt nicht &lt;job name&gt;-&lt;job id&gt; (%2-%3), wie Starforge seine Jobs benennt; er wird nicht verfolgt.</translation>
    </message>
    <message>
        <source>Job %1 is yours but archives to %2, another profile's bucket; %3 it from that profile.</source>
        <translation>Job %1 gehört Ihnen, wird aber in %2 archiviert, dem Bucket eines anderen Profils; Sie können ihn nur über dieses Profil %3.</translation>
    </message>
    <message>
        <source>Job %1 belongs to %2; Starforge does not %3 other people's jobs.</source>
        <translation>Job %1 gehört %2; Starforge kann Jobs anderer Personen nicht %3.</translation>
    </message>
    <message>
        <source>The archive of job %1 records no owner (it was made before Starforge recorded owners); Starforge does not %2 it. Remove jobs/%1/ from the bucket with an S3 tool if it is yours.</source>
        <translation>Das Archiv von Job %1 enthält keinen Besitzer (es wurde erstellt, bevor Starforge Besitzer erfasste); Starforge kann es nicht %2. Entfernen Sie jobs/%1/ mit einem S3-Tool aus dem Bucket, wenn es Ihnen gehört.</translation>
    </message>
    <message>
        <source>Job %1 records no owner (it was made before Starforge recorded owners); Starforge does not %2 it. kubectl delete rayjob %3 -n %4 would.</source>
        <translation>Job %1 enthält keinen Besitzer (er wurde erstellt, bevor Starforge Besitzer erfasste); Starforge kann ihn nicht %2. Mit kubectl delete rayjob %3 -n %4 ist es möglich.</translation>
    </message>
    <message>
        <source>notYours called for the viewer's own job</source>
        <translation>notYours für den eigenen Job des Betrachters aufgerufen</translation>
    </message>
</context>
<context>
    <name>PlaygroundClient</name>
    <message>
        <source>ended</source>
        <translation>beendet</translation>
    </message>
    <message>
        <source>ended: %1</source>
        <translation>beendet: %1</translation>
    </message>
    <message>
        <source>ready</source>
        <translation>bereit</translation>
    </message>
    <message>
        <source>waiting: %1</source>
        <translation>wartet: %1</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>startet</translation>
    </message>
    <message>
        <source>create the playground pod in namespace %1</source>
        <translation>den Playground-Pod im Namespace %1 erstellen</translation>
    </message>
    <message>
        <source>list the playground pods in namespace %1</source>
        <translation>die Playground-Pods im Namespace %1 auflisten</translation>
    </message>
    <message>
        <source>read the playground pod %1</source>
        <translation>den Playground-Pod %1 lesen</translation>
    </message>
    <message>
        <source>%1 is not a playground pod; Starforge stops only the playground pods it made.</source>
        <translation>%1 ist kein Playground-Pod; Starforge stoppt nur die Playground-Pods, die es selbst erstellt hat.</translation>
    </message>
    <message>
        <source>The playground pod %1 belongs to %2; Starforge stops only your own.</source>
        <translation>Der Playground-Pod %1 gehört %2; Starforge stoppt nur Ihre eigenen.</translation>
    </message>
    <message>
        <source>nobody recorded</source>
        <translation>keinem erfassten Besitzer</translation>
    </message>
    <message>
        <source>delete the playground pod %1</source>
        <translation>den Playground-Pod %1 löschen</translation>
    </message>
    <message>
        <source>read the events of %1</source>
        <translation>die Ereignisse von %1 lesen</translation>
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
        <translation>model: erforderlich: der Pfad eines Checkpoints unter %1 oder ein Modellname wie Qwen/Qwen3-0.6B.</translation>
    </message>
    <message>
        <source>model: "%1" must not contain "..".</source>
        <translation>model: "%1" darf kein ".." enthalten.</translation>
    </message>
    <message>
        <source>model: %1 is not under the storage root %2, the only storage a playground pod mounts.</source>
        <translation>model: %1 liegt nicht unter dem Speicher-Stammverzeichnis %2, dem einzigen Speicher, den ein Playground-Pod einbindet.</translation>
    </message>
    <message>
        <source>model: a checkpoint is served from the storage volume, but the profile has none; set FORGE_K8S_STORAGE_PVC.</source>
        <translation>model: Ein Checkpoint wird vom Speicher-Volume bereitgestellt, aber das Profil hat keines; setzen Sie FORGE_K8S_STORAGE_PVC.</translation>
    </message>
    <message>
        <source>model: "%1" is neither a path under %2 nor a model name such as Qwen/Qwen3-0.6B.</source>
        <translation>model: "%1" ist weder ein Pfad unter %2 noch ein Modellname wie Qwen/Qwen3-0.6B.</translation>
    </message>
    <message>
        <source>tokenizer: %1 must be a path under the storage root %2.</source>
        <translation>tokenizer: %1 muss ein Pfad unter dem Speicher-Stammverzeichnis %2 sein.</translation>
    </message>
    <message>
        <source>servedName: "%1" must be 1-128 letters, digits, '.', '_', '-' or '/'.</source>
        <translation>servedName: "%1" muss aus 1-128 Buchstaben, Ziffern, '.', '_', '-' oder '/' bestehen.</translation>
    </message>
    <message>
        <source>series: "%1" is not a GPU series of the cluster (a node label value).</source>
        <translation>series: "%1" ist keine GPU-Serie des Clusters (ein Wert eines Knoten-Labels).</translation>
    </message>
    <message>
        <source>gpus: the tensor parallel size must be between 1 and 64, not %1.</source>
        <translation>gpus: Die Tensor-Parallelgröße muss zwischen 1 und 64 liegen, nicht %1.</translation>
    </message>
    <message>
        <source>ttl: must be between 1 minute and 7 days, not %1 s.</source>
        <translation>ttl: muss zwischen 1 Minute und 7 Tagen liegen, nicht %1 s.</translation>
    </message>
    <message>
        <source>maxModelLen: must be at least 16 tokens, or 0 for the model's own, not %1.</source>
        <translation>maxModelLen: muss mindestens 16 Tokens betragen oder 0 für den Wert des Modells, nicht %1.</translation>
    </message>
    <message>
        <source>job: "%1" is not a Starforge job id.</source>
        <translation>job: "%1" ist keine Starforge-Job-ID.</translation>
    </message>
    <message>
        <source>owner: unknown; set FORGE_OWNER, or sign in so the cluster names you.</source>
        <translation>owner: unbekannt; setzen Sie FORGE_OWNER oder melden Sie sich an, damit der Cluster Sie benennt.</translation>
    </message>
    <message>
        <source>image: FORGE_IMAGE_VLLM is empty; set the vLLM image to run.</source>
        <translation>image: FORGE_IMAGE_VLLM ist leer; legen Sie das auszuführende vLLM-Image fest.</translation>
    </message>
</context>
<context>
    <name>ProfileStore</name>
    <message>
        <source>profile %1: renamed %2 to %3</source>
        <translation>Profil %1: %2 in %3 umbenannt</translation>
    </message>
    <message>
        <source>profile %1: dropped unknown setting %2</source>
        <translation>Profil %1: unbekannte Einstellung %2 entfernt</translation>
    </message>
    <message>
        <source>profile %1: %2 moves from the settings file to the keychain</source>
        <translation>Profil %1: %2 wird aus der Einstellungsdatei in den Schlüsselbund verschoben</translation>
    </message>
    <message>
        <source>profile %1: dropped invalid value (%2)</source>
        <translation>Profil %1: ungültiger Wert entfernt (%2)</translation>
    </message>
    <message>
        <source>cannot read the profiles file %1: %2</source>
        <translation>die Profildatei %1 kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <source>the profiles file %1 is not a valid INI file; fix or move it away</source>
        <translation>die Profildatei %1 ist keine gültige INI-Datei; korrigieren oder verschieben Sie sie</translation>
    </message>
    <message>
        <source>the profiles file %1 has an unreadable settings/version '%2'</source>
        <translation>die Profildatei %1 hat eine unlesbare settings/version '%2'</translation>
    </message>
    <message>
        <source>the profiles file %1 was written by a newer Starforge (settings version %2; this one reads up to %3). Update Starforge; the file was left untouched.</source>
        <translation>die Profildatei %1 wurde von einer neueren Starforge-Version geschrieben (Einstellungsversion %2; diese Version liest bis %3). Aktualisieren Sie Starforge; die Datei wurde nicht verändert.</translation>
    </message>
    <message>
        <source>profile '%1' has an invalid name and was skipped</source>
        <translation>Profil '%1' hat einen ungültigen Namen und wurde übersprungen</translation>
    </message>
    <message>
        <source>profile %1: ignored invalid value (%2)</source>
        <translation>Profil %1: ungültiger Wert ignoriert (%2)</translation>
    </message>
    <message>
        <source>the active profile '%1' does not exist; none is active</source>
        <translation>das aktive Profil '%1' existiert nicht; kein Profil ist aktiv</translation>
    </message>
    <message>
        <source>cannot create the folder %1 for the profiles file</source>
        <translation>der Ordner %1 für die Profildatei kann nicht erstellt werden</translation>
    </message>
    <message>
        <source>cannot write in the folder of the profiles file %1: %2</source>
        <translation>im Ordner der Profildatei %1 kann nicht geschrieben werden: %2</translation>
    </message>
    <message>
        <source>cannot write the profiles file %1</source>
        <translation>die Profildatei %1 kann nicht geschrieben werden</translation>
    </message>
    <message>
        <source>cannot replace the profiles file %1: %2</source>
        <translation>die Profildatei %1 kann nicht ersetzt werden: %2</translation>
    </message>
    <message>
        <source>'%1' has surrounding spaces; a profile name has none</source>
        <translation>'%1' hat Leerzeichen am Anfang oder Ende; ein Profilname darf keine haben</translation>
    </message>
    <message>
        <source>a profile named '%1' already exists; choose another name</source>
        <translation>ein Profil namens '%1' existiert bereits; wählen Sie einen anderen Namen</translation>
    </message>
    <message>
        <source>there is no profile named '%1'</source>
        <translation>es gibt kein Profil namens '%1'</translation>
    </message>
    <message>
        <source>%1 is a secret and is kept in the keychain, not in the profile file</source>
        <translation>%1 ist ein Geheimnis und wird im Schlüsselbund gespeichert, nicht in der Profildatei</translation>
    </message>
</context>
<context>
    <name>ProfilesDialog</name>
    <message>
        <source>Connection Profiles</source>
        <translation>Verbindungsprofile</translation>
    </message>
    <message>
        <source>&lt;b&gt;Profiles&lt;/b&gt;</source>
        <translation>&lt;b&gt;Profile&lt;/b&gt;</translation>
    </message>
    <message>
        <source>&amp;Add…</source>
        <translation>&amp;Hinzufügen…</translation>
    </message>
    <message>
        <source>Create an empty profile</source>
        <translation>Ein leeres Profil erstellen</translation>
    </message>
    <message>
        <source>&amp;Import kubeconfig…</source>
        <translation>kubeconfig &amp;importieren…</translation>
    </message>
    <message>
        <source>Create or update a profile from a kubeconfig context</source>
        <translation>Ein Profil aus einem kubeconfig-Kontext erstellen oder aktualisieren</translation>
    </message>
    <message>
        <source>D&amp;uplicate…</source>
        <translation>&amp;Duplizieren…</translation>
    </message>
    <message>
        <source>Re&amp;name…</source>
        <translation>&amp;Umbenennen…</translation>
    </message>
    <message>
        <source>Make a&amp;ctive</source>
        <translation>&amp;Aktivieren</translation>
    </message>
    <message>
        <source>Connect the main window with this profile</source>
        <translation>Das Hauptfenster mit diesem Profil verbinden</translation>
    </message>
    <message>
        <source>&amp;Delete…</source>
        <translation>&amp;Löschen…</translation>
    </message>
    <message>
        <source>&amp;Reset to default</source>
        <translation>Auf &amp;Standard zurücksetzen</translation>
    </message>
    <message>
        <source>Back to the default; for a secret: remove it from the keychain (on apply)</source>
        <translation>Zurück zum Standardwert; bei einem Geheimnis: aus dem Schlüsselbund entfernen (beim Anwenden)</translation>
    </message>
    <message>
        <source>Re&amp;vert</source>
        <translation>&amp;Verwerfen</translation>
    </message>
    <message>
        <source>A&amp;pply</source>
        <translation>Anwe&amp;nden</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <source>&amp;Test connection…</source>
        <translation>Verbindung &amp;testen…</translation>
    </message>
    <message>
        <source>Check the saved settings: the API server, sign-in, KubeRay, what the token may do, and the bucket</source>
        <translation>Die gespeicherten Einstellungen prüfen: API-Server, Anmeldung, KubeRay, die Berechtigungen des Tokens und den Bucket</translation>
    </message>
</context>
<context>
    <name>Progress</name>
    <message>
        <source>Ran all epochs</source>
        <translation>Alle Epochen durchlaufen</translation>
    </message>
    <message>
        <source>Exited with code %1</source>
        <translation>Mit Exit-Code %1 beendet</translation>
    </message>
    <message>
        <source> (global step %1)</source>
        <translation> (globaler Schritt %1)</translation>
    </message>
    <message>
        <source>last checkpoint step %1</source>
        <translation>letzter Checkpoint bei Schritt %1</translation>
    </message>
    <message>
        <source>saving step %1</source>
        <translation>Schritt %1 wird gespeichert</translation>
    </message>
</context>
<context>
    <name>ProgressFollower</name>
    <message>
        <source>find the submitter pod of job %1</source>
        <translation>den Submitter-Pod von Job %1 finden</translation>
    </message>
</context>
<context>
    <name>Proxy</name>
    <message>
        <source>%1 (%2) is not a proxy URL. Write e.g. http://proxy.example.com:3128 or socks5://127.0.0.1:1080.</source>
        <translation>%1 (%2) ist keine Proxy-URL. Schreiben Sie z. B. http://proxy.example.com:3128 oder socks5://127.0.0.1:1080.</translation>
    </message>
    <message>
        <source>%1 (%2) is a proxy reached over TLS (https://), which this app cannot speak to. Give the proxy's plain http:// address instead: requests to https:// servers stay encrypted end to end, the proxy only relays them after CONNECT. A socks5:// proxy works too.</source>
        <translation>%1 (%2) ist ein über TLS (https://) erreichbarer Proxy, mit dem diese App nicht kommunizieren kann. Geben Sie stattdessen die einfache http://-Adresse des Proxys an: Anfragen an https://-Server bleiben durchgehend verschlüsselt, der Proxy leitet sie nach CONNECT nur weiter. Ein socks5://-Proxy funktioniert ebenfalls.</translation>
    </message>
    <message>
        <source>%1 (%2) uses the scheme '%3'; a proxy is http://, socks5:// or socks5h://.</source>
        <translation>%1 (%2) verwendet das Schema '%3'; ein Proxy ist http://, socks5:// oder socks5h://.</translation>
    </message>
    <message>
        <source>The proxy URL</source>
        <translation>Die Proxy-URL</translation>
    </message>
    <message>
        <source>%1 in the environment</source>
        <translation>%1 in der Umgebung</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>Cannot read the job history from the bucket: %1</source>
        <translation>Der Job-Verlauf kann nicht aus dem Bucket gelesen werden: %1</translation>
    </message>
    <message>
        <source>Job %1 is neither on the cluster nor in the job history.</source>
        <translation>Job %1 ist weder im Cluster noch im Job-Verlauf.</translation>
    </message>
    <message>
        <source>The archive of job %1 is damaged: %2</source>
        <translation>Das Archiv von Job %1 ist beschädigt: %2</translation>
    </message>
    <message>
        <source>%1 is not in the archive.</source>
        <translation>%1 ist nicht im Archiv.</translation>
    </message>
    <message>
        <source>Could not remove the leftover %1.</source>
        <translation>Das Überbleibsel %1 konnte nicht entfernt werden.</translation>
    </message>
</context>
<context>
    <name>RayJobBuilder</name>
    <message>
        <source>The job id "%1" must be six lowercase letters or digits.</source>
        <translation>Die Job-ID "%1" muss aus sechs Kleinbuchstaben oder Ziffern bestehen.</translation>
    </message>
    <message>
        <source>The Capsule's SHA-256 "%1" is not 64 hex digits.</source>
        <translation>Der SHA-256 der Capsule "%1" besteht nicht aus 64 Hexadezimalziffern.</translation>
    </message>
    <message>
        <source>The SHA-256 of the Capsule's manifest.json "%1" is not 64 hex digits.</source>
        <translation>Der SHA-256 der manifest.json der Capsule "%1" besteht nicht aus 64 Hexadezimalziffern.</translation>
    </message>
    <message>
        <source>The Capsule URL "%1" is not an http(s) URL.</source>
        <translation>Die Capsule-URL "%1" ist keine http(s)-URL.</translation>
    </message>
    <message>
        <source>The job has no owner: set FORGE_OWNER in the profile, or connect so the cluster can say who you are.</source>
        <translation>Der Job hat keinen Besitzer: Setzen Sie FORGE_OWNER im Profil oder verbinden Sie sich, damit der Cluster mitteilen kann, wer Sie sind.</translation>
    </message>
</context>
<context>
    <name>S3</name>
    <message>
        <source>bucket %1</source>
        <translation>Bucket %1</translation>
    </message>
    <message>
        <source>object %1 in bucket %2</source>
        <translation>Objekt %1 in Bucket %2</translation>
    </message>
    <message>
        <source> (the server says: %1)</source>
        <translation> (Meldung des Servers: %1)</translation>
    </message>
    <message>
        <source>%1 does not know the access key %2. Check FORGE_S3_ACCESS_KEY: it must be an access key id issued by this S3 server.</source>
        <translation>%1 kennt den Zugriffsschlüssel %2 nicht. Prüfen Sie FORGE_S3_ACCESS_KEY: Es muss eine von diesem S3-Server ausgegebene Zugriffsschlüssel-ID sein.</translation>
    </message>
    <message>
        <source>%1 rejected the request signature: the secret key does not belong to access key %2. Check FORGE_S3_SECRET_KEY (and FORGE_S3_REGION if the server is region-bound).</source>
        <translation>%1 hat die Anfragesignatur abgelehnt: Der geheime Schlüssel gehört nicht zum Zugriffsschlüssel %2. Prüfen Sie FORGE_S3_SECRET_KEY (und FORGE_S3_REGION, falls der Server an eine Region gebunden ist).</translation>
    </message>
    <message>
        <source>%1 rejected the request because this machine's clock differs from the server's by more than 15 minutes. Fix the machine's clock (enable time synchronisation, NTP) and try again.%2</source>
        <translation>%1 hat die Anfrage abgelehnt, weil die Uhr dieses Rechners um mehr als 15 Minuten von der des Servers abweicht. Korrigieren Sie die Uhr des Rechners (Zeitsynchronisierung per NTP aktivieren) und versuchen Sie es erneut.%2</translation>
    </message>
    <message>
        <source>The bucket %1 does not exist on %2. Create it, or set FORGE_S3_BUCKET to an existing bucket.</source>
        <translation>Der Bucket %1 existiert auf %2 nicht. Erstellen Sie ihn oder setzen Sie FORGE_S3_BUCKET auf einen vorhandenen Bucket.</translation>
    </message>
    <message>
        <source>The object %1 does not exist in bucket %2.</source>
        <translation>Das Objekt %1 existiert nicht in Bucket %2.</translation>
    </message>
    <message>
        <source>The multipart upload of %1 no longer exists on %2 (it was completed or aborted). Start the upload again.</source>
        <translation>Der Multipart-Upload von %1 existiert auf %2 nicht mehr (er wurde abgeschlossen oder abgebrochen). Starten Sie den Upload erneut.</translation>
    </message>
    <message>
        <source>%1 denied access to the %2 for access key %3. Give this key permission on the bucket, or check FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY.%4</source>
        <translation>%1 hat den Zugriff auf %2 für den Zugriffsschlüssel %3 verweigert. Erteilen Sie diesem Schlüssel Berechtigungen für den Bucket oder prüfen Sie FORGE_S3_ACCESS_KEY und FORGE_S3_SECRET_KEY.%4</translation>
    </message>
    <message>
        <source>%1 received different bytes than were sent for the %2 (%3): the payload was corrupted in transit. Try again; if it repeats, check proxies or network equipment between this machine and the server.</source>
        <translation>%1 hat für %2 andere Bytes empfangen als gesendet wurden (%3): Die Daten wurden bei der Übertragung beschädigt. Versuchen Sie es erneut; tritt das wieder auf, prüfen Sie Proxys oder Netzwerkgeräte zwischen diesem Rechner und dem Server.</translation>
    </message>
    <message>
        <source>%1 refused to assemble the %2: every part but the last must be at least 5 MiB. Raise the part size.</source>
        <translation>%1 hat das Zusammensetzen von %2 abgelehnt: Jeder Teil außer dem letzten muss mindestens 5 MiB groß sein. Erhöhen Sie die Teilgröße.</translation>
    </message>
    <message>
        <source>%1 refused to assemble the %2: a part is missing or its ETag does not match what was uploaded (%3). Upload the object again.</source>
        <translation>%1 hat das Zusammensetzen von %2 abgelehnt: Ein Teil fehlt oder sein ETag stimmt nicht mit dem Hochgeladenen überein (%3). Laden Sie das Objekt erneut hoch.</translation>
    </message>
    <message>
        <source>%1 refused the %2: it is larger than the server allows.%3</source>
        <translation>%1 hat %2 abgelehnt: Es ist größer, als der Server erlaubt.%3</translation>
    </message>
    <message>
        <source>The bucket %1 already exists on %2.</source>
        <translation>Der Bucket %1 existiert bereits auf %2.</translation>
    </message>
    <message>
        <source>%1 asks to slow down (HTTP %2). Try again in a moment.</source>
        <translation>%1 bittet darum, die Anfragen zu verlangsamen (HTTP %2). Versuchen Sie es gleich noch einmal.</translation>
    </message>
    <message>
        <source>%1 failed with HTTP %2%3 for the %4. Try again later; if it repeats, the server's administrator has to look at it.%5</source>
        <translation>%1 ist mit HTTP %2%3 für %4 fehlgeschlagen. Versuchen Sie es später erneut; tritt das wieder auf, muss sich der Administrator des Servers darum kümmern.%5</translation>
    </message>
    <message>
        <source>%1 says the %2 lives at another address. Check FORGE_S3_ENDPOINT, FORGE_S3_REGION and FORGE_S3_PATH_STYLE.%3</source>
        <translation>%1 meldet, dass %2 unter einer anderen Adresse liegt. Prüfen Sie FORGE_S3_ENDPOINT, FORGE_S3_REGION und FORGE_S3_PATH_STYLE.%3</translation>
    </message>
    <message>
        <source>%1 refused the request for the %2 with HTTP %3%4.%5</source>
        <translation>%1 hat die Anfrage für %2 mit HTTP %3%4 abgelehnt.%5</translation>
    </message>
    <message>
        <source>The S3 server sent a %1 answer that cannot be read (%2). Check that the endpoint is an S3 API address.</source>
        <translation>Der S3-Server hat eine %1-Antwort gesendet, die nicht gelesen werden kann (%2). Prüfen Sie, ob der Endpunkt eine S3-API-Adresse ist.</translation>
    </message>
    <message>
        <source>nested or repeated too deeply</source>
        <translation>zu tief verschachtelt oder wiederholt</translation>
    </message>
    <message>
        <source>more than one root element</source>
        <translation>mehr als ein Wurzelelement</translation>
    </message>
    <message>
        <source>a DTD is not allowed</source>
        <translation>eine DTD ist nicht erlaubt</translation>
    </message>
    <message>
        <source>%1 at line %2</source>
        <translation>%1 in Zeile %2</translation>
    </message>
    <message>
        <source>no XML element</source>
        <translation>kein XML-Element</translation>
    </message>
    <message>
        <source>&lt;%1&gt; instead of &lt;%2&gt;</source>
        <translation>&lt;%1&gt; statt &lt;%2&gt;</translation>
    </message>
    <message>
        <source>an entry without a key</source>
        <translation>ein Eintrag ohne Schlüssel</translation>
    </message>
    <message>
        <source>the size of %1 is not a number</source>
        <translation>die Größe von %1 ist keine Zahl</translation>
    </message>
    <message>
        <source>a truncated page without NextContinuationToken</source>
        <translation>eine abgeschnittene Seite ohne NextContinuationToken</translation>
    </message>
    <message>
        <source>a part without a valid number or size</source>
        <translation>ein Teil ohne gültige Nummer oder Größe</translation>
    </message>
    <message>
        <source>a truncated page without NextPartNumberMarker</source>
        <translation>eine abgeschnittene Seite ohne NextPartNumberMarker</translation>
    </message>
    <message>
        <source>an upload without an UploadId</source>
        <translation>ein Upload ohne UploadId</translation>
    </message>
    <message>
        <source>a truncated page without NextKeyMarker</source>
        <translation>eine abgeschnittene Seite ohne NextKeyMarker</translation>
    </message>
    <message>
        <source>no UploadId</source>
        <translation>keine UploadId</translation>
    </message>
    <message>
        <source>an error without a code</source>
        <translation>ein Fehler ohne Code</translation>
    </message>
    <message>
        <source>FORGE_S3_ENDPOINT is not set. Give the URL of the S3-compatible object store, e.g. https://s3.example.com.</source>
        <translation>FORGE_S3_ENDPOINT ist nicht gesetzt. Geben Sie die URL des S3-kompatiblen Objektspeichers an, z. B. https://s3.example.com.</translation>
    </message>
    <message>
        <source>FORGE_S3_ENDPOINT (%1) is not an http(s) URL with a host.</source>
        <translation>FORGE_S3_ENDPOINT (%1) ist keine http(s)-URL mit Host.</translation>
    </message>
    <message>
        <source>FORGE_S3_BUCKET is not set. Give the bucket that holds Capsules and logs.</source>
        <translation>FORGE_S3_BUCKET ist nicht gesetzt. Geben Sie den Bucket an, der Capsules und Logs enthält.</translation>
    </message>
    <message>
        <source>FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY must both be set (in the keychain or the environment) to use %1.</source>
        <translation>FORGE_S3_ACCESS_KEY und FORGE_S3_SECRET_KEY müssen beide gesetzt sein (im Schlüsselbund oder in der Umgebung), um %1 zu verwenden.</translation>
    </message>
    <message>
        <source>FORGE_S3_CA_FILE: %1</source>
        <translation>FORGE_S3_CA_FILE: %1</translation>
    </message>
    <message>
        <source>The S3 request has not finished yet.</source>
        <translation>Die S3-Anfrage ist noch nicht abgeschlossen.</translation>
    </message>
    <message>
        <source>The S3 request was cancelled.</source>
        <translation>Die S3-Anfrage wurde abgebrochen.</translation>
    </message>
    <message>
        <source>The S3 client was destroyed before the request went out.</source>
        <translation>Der S3-Client wurde zerstört, bevor die Anfrage gesendet wurde.</translation>
    </message>
    <message>
        <source>Writing %1 to disk failed: %2. Free some space and try again.</source>
        <translation>Das Schreiben von %1 auf die Festplatte ist fehlgeschlagen: %2. Geben Sie Speicherplatz frei und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>a request to bucket %1</source>
        <translation>eine Anfrage an Bucket %1</translation>
    </message>
    <message>
        <source>The S3 server's answer for %1 is larger than %2 MiB, the most Starforge holds in memory; it was not read. A large object is downloaded to a file instead.</source>
        <translation>Die Antwort des S3-Servers für %1 ist größer als %2 MiB, das Maximum, das Starforge im Speicher hält; sie wurde nicht gelesen. Ein großes Objekt wird stattdessen in eine Datei heruntergeladen.</translation>
    </message>
    <message>
        <source>Cannot write %1: %2.</source>
        <translation>%1 kann nicht geschrieben werden: %2.</translation>
    </message>
    <message>
        <source>The S3 server's listing of %1 does not end: it said there is more but returned %2 after %3 pages. The listing was stopped; the server or a proxy in front of it is at fault.</source>
        <translation>Die Auflistung für %1 durch den S3-Server endet nicht: Er meldete weitere Einträge, lieferte aber nach %3 Seiten %2. Die Auflistung wurde abgebrochen; der Fehler liegt beim Server oder einem vorgeschalteten Proxy.</translation>
    </message>
    <message>
        <source>the bucket</source>
        <translation>den Bucket</translation>
    </message>
    <message>
        <source>no continuation token</source>
        <translation>kein Fortsetzungstoken</translation>
    </message>
    <message>
        <source>a continuation token it had given before</source>
        <translation>ein Fortsetzungstoken, das er bereits zuvor geliefert hatte</translation>
    </message>
    <message>
        <source>A presigned URL must expire between 1 second and 7 days from now; %1 seconds was asked.</source>
        <translation>Eine vorsignierte URL muss zwischen 1 Sekunde und 7 Tagen ab jetzt ablaufen; angefordert wurden %1 Sekunden.</translation>
    </message>
    <message>
        <source>A presigned URL needs an object key.</source>
        <translation>Eine vorsignierte URL benötigt einen Objektschlüssel.</translation>
    </message>
    <message>
        <source>The S3 server's part listing does not advance.</source>
        <translation>Die Teileauflistung des S3-Servers kommt nicht voran.</translation>
    </message>
    <message>
        <source>The S3 server's listing of unfinished uploads under %1 does not end: it said there is more but returned markers it had given before after %2 pages. The listing was stopped; the server or a proxy in front of it is at fault.</source>
        <translation>Die Auflistung unvollendeter Uploads unter %1 durch den S3-Server endet nicht: Er meldete weitere Einträge, lieferte aber nach %2 Seiten bereits zuvor gelieferte Marker. Die Auflistung wurde abgebrochen; der Fehler liegt beim Server oder einem vorgeschalteten Proxy.</translation>
    </message>
</context>
<context>
    <name>SandboxApp</name>
    <message>
        <source>A local Kubernetes + KubeRay cluster for Starforge and its tests.</source>
        <translation>Ein lokaler Kubernetes-Cluster mit KubeRay für Starforge und seine Tests.</translation>
    </message>
    <message>
        <source>Loopback address and port (port 0: any free one).</source>
        <translation>Loopback-Adresse und Port (Port 0: ein beliebiger freier).</translation>
    </message>
    <message>
        <source>Where to write the connection details once ready (JSON).</source>
        <translation>Datei, in die die Verbindungsdaten geschrieben werden, sobald die Sandbox bereit ist (JSON).</translation>
    </message>
    <message>
        <source>Nodes: SERIES:NODESxGPUS,... (e.g. h200:4x8,cpu:2x0) or scale:N.</source>
        <translation>Knoten: SERIES:NODESxGPUS,... (z. B. h200:4x8,cpu:2x0) oder scale:N.</translation>
    </message>
    <message>
        <source>Seed for the sandbox's random choices.</source>
        <translation>Startwert (Seed) für die Zufallsentscheidungen der Sandbox.</translation>
    </message>
    <message>
        <source>RBAC file adding users with fewer rights.</source>
        <translation>RBAC-Datei, die Benutzer mit weniger Rechten hinzufügt.</translation>
    </message>
    <message>
        <source>Faults from the start: rate429=F,rate500=F,delayMs=N,dropWatchesAfterMs=N,dropLogsAfterMs=N,s3PartFailureRate=F,next500Creates=N,holdS3Uploads=0|1 (docs/sandbox.md).</source>
        <translation>Von Beginn an eingespeiste Fehler: rate429=F,rate500=F,delayMs=N,dropWatchesAfterMs=N,dropLogsAfterMs=N,s3PartFailureRate=F,next500Creates=N,holdS3Uploads=0|1 (docs/sandbox.md).</translation>
    </message>
    <message>
        <source>The namespace for Starforge's objects.</source>
        <translation>Der Namespace für die Objekte von Starforge.</translation>
    </message>
    <message>
        <source>Images present on the nodes, comma-separated (default: the FORGE_IMAGE_* defaults); others fail to pull.</source>
        <translation>Auf den Knoten vorhandene Images, durch Kommas getrennt (Standard: die FORGE_IMAGE_*-Standardwerte); andere lassen sich nicht abrufen.</translation>
    </message>
    <message>
        <source>Image prefix of the private registry: its images need an imagePullSecrets Secret (kubernetes.io/dockerconfigjson) with credentials for its host, else the pull fails with 401 Unauthorized (default registry.sandbox.internal/private/; empty: none).</source>
        <translation>Image-Präfix der privaten Registry: Ihre Images benötigen ein imagePullSecrets-Secret (kubernetes.io/dockerconfigjson) mit Anmeldedaten für ihren Host, sonst schlägt das Abrufen mit 401 Unauthorized fehl (Standard: registry.sandbox.internal/private/; leer: keines).</translation>
    </message>
    <message>
        <source>The KubeRay release to be, 1.4 to 1.7: its RayJob CRD is served and admitted against (1.5 and older prune preRunningDeadlineSeconds).</source>
        <translation>Die nachzubildende KubeRay-Version, 1.4 bis 1.7: Ihre RayJob-CRD wird bereitgestellt und zur Zulassung verwendet (1.5 und älter verwerfen preRunningDeadlineSeconds).</translation>
    </message>
    <message>
        <source>Lifetime of the tokens starforge-sandbox-credential (the kubeconfig's starforge-sandbox-exec context) mints (default 3600; 0: they never expire).</source>
        <translation>Lebensdauer der Tokens, die starforge-sandbox-credential (der Kontext starforge-sandbox-exec der kubeconfig) ausstellt (Standard 3600; 0: kein Ablauf).</translation>
    </message>
    <message>
        <source>Run the operator with DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true: shutdownAfterJobFinishes deletes the RayJob itself at ttlSecondsAfterFinished.</source>
        <translation>Den Operator mit DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true ausführen: shutdownAfterJobFinishes löscht den RayJob selbst nach ttlSecondsAfterFinished.</translation>
    </message>
    <message>
        <source>The operator's feature gates: RayJobDeletionPolicy=true|false (spec.deletionStrategy; default on from --kuberay-version 1.6).</source>
        <translation>Die Feature-Gates des Operators: RayJobDeletionPolicy=true|false (spec.deletionStrategy; ab --kuberay-version 1.6 standardmäßig an).</translation>
    </message>
    <message>
        <source>The operator's environment, comma-separated: ENABLE_INIT_CONTAINER_INJECTION, ENABLE_PROBES_INJECTION (on unless false) and DELETE_RAYJOB_CR_AFTER_JOB_FINISHES (off unless true), e.g. ENABLE_PROBES_INJECTION=false.</source>
        <translation>Die Umgebung des Operators, durch Kommas getrennt: ENABLE_INIT_CONTAINER_INJECTION, ENABLE_PROBES_INJECTION (an, außer bei false) und DELETE_RAYJOB_CR_AFTER_JOB_FINISHES (aus, außer bei true), z. B. ENABLE_PROBES_INJECTION=false.</translation>
    </message>
    <message>
        <source>Tokens per second the vLLM stand-in generates in playground pods (default 50).</source>
        <translation>Tokens pro Sekunde, die der vLLM-Ersatz in Playground-Pods erzeugt (Standard 50).</translation>
    </message>
    <message>
        <source>--listen takes HOST:PORT with a loopback address, e.g. 127.0.0.1:0, not '%1'</source>
        <translation>--listen erwartet HOST:PORT mit einer Loopback-Adresse, z. B. 127.0.0.1:0, nicht '%1'</translation>
    </message>
    <message>
        <source>--seed takes a non-negative integer</source>
        <translation>--seed erwartet eine nicht negative ganze Zahl</translation>
    </message>
    <message>
        <source>--kuberay-version: %1</source>
        <translation>--kuberay-version: %1</translation>
    </message>
    <message>
        <source>--token-ttl takes a number of seconds (0: tokens never expire), not '%1'</source>
        <translation>--token-ttl erwartet eine Anzahl Sekunden (0: Tokens laufen nie ab), nicht '%1'</translation>
    </message>
    <message>
        <source>--token-rate takes a positive number of tokens per second, not '%1'</source>
        <translation>--token-rate erwartet eine positive Anzahl Tokens pro Sekunde, nicht '%1'</translation>
    </message>
    <message>
        <source>--feature-gates takes RayJobDeletionPolicy=true or RayJobDeletionPolicy=false, not '%1'</source>
        <translation>--feature-gates erwartet RayJobDeletionPolicy=true oder RayJobDeletionPolicy=false, nicht '%1'</translation>
    </message>
    <message>
        <source>--operator-env takes NAME=VALUE pairs, not '%1'</source>
        <translation>--operator-env erwartet NAME=VALUE-Paare, nicht '%1'</translation>
    </message>
    <message>
        <source>--operator-env knows ENABLE_INIT_CONTAINER_INJECTION, ENABLE_PROBES_INJECTION and DELETE_RAYJOB_CR_AFTER_JOB_FINISHES, not '%1'</source>
        <translation>--operator-env kennt ENABLE_INIT_CONTAINER_INJECTION, ENABLE_PROBES_INJECTION und DELETE_RAYJOB_CR_AFTER_JOB_FINISHES, nicht '%1'</translation>
    </message>
    <message>
        <source>starforge-sandbox %1 serving %2; connection file %3</source>
        <translation>starforge-sandbox %1 läuft unter %2; Verbindungsdatei %3</translation>
    </message>
    <message>
        <source>Seconds each training step of the NeMo-RL stand-in takes (default 0.2), so a job with hundreds of steps can run unchanged in a test.</source>
        <translation>Sekunden, die jeder Trainingsschritt des NeMo-RL-Stand-ins dauert (Standard 0.2), damit ein Job mit Hunderten von Schritten unverändert in einem Test laufen kann.</translation>
    </message>
    <message>
        <source>--nemo-rl-step-seconds takes a number of seconds, 0 or more, not '%1'</source>
        <translation>--nemo-rl-step-seconds erwartet eine Anzahl Sekunden, 0 oder mehr, nicht '%1'</translation>
    </message>
</context>
<context>
    <name>Selfsubjectreview</name>
    <message>
        <source>the SelfSubjectReview has no status.userInfo.username</source>
        <translation>die SelfSubjectReview enthält kein status.userInfo.username</translation>
    </message>
</context>
<context>
    <name>SessionSource</name>
    <message>
        <source>profile %1</source>
        <translation>Profil %1</translation>
    </message>
    <message>
        <source>the sandbox's connection file %1</source>
        <translation>die Verbindungsdatei %1 der Sandbox</translation>
    </message>
    <message>
        <source>there is no connection file '%1': start the sandbox first (starforge-sandbox --connection-file FILE writes it once it is ready, and removes it when it stops)</source>
        <translation>es gibt keine Verbindungsdatei '%1': Starten Sie zuerst die Sandbox (starforge-sandbox --connection-file FILE schreibt sie, sobald die Sandbox bereit ist, und entfernt sie, wenn sie beendet wird)</translation>
    </message>
    <message>
        <source>The starforge-sandbox that wrote %1 has stopped: start it again.</source>
        <translation>Die starforge-sandbox, die %1 geschrieben hat, wurde beendet: Starten Sie sie erneut.</translation>
    </message>
    <message>
        <source>The starforge-sandbox that wrote %1 (pid %2) is not running any more: start it again.</source>
        <translation>Die starforge-sandbox, die %1 geschrieben hat (PID %2), läuft nicht mehr: Starten Sie sie erneut.</translation>
    </message>
</context>
<context>
    <name>SettingsSchema</name>
    <message>
        <source>Cluster</source>
        <translation>Cluster</translation>
    </message>
    <message>
        <source>Sign-in</source>
        <translation>Anmeldung</translation>
    </message>
    <message>
        <source>Network</source>
        <translation>Netzwerk</translation>
    </message>
    <message>
        <source>GPUs and pods</source>
        <translation>GPUs und Pods</translation>
    </message>
    <message>
        <source>Images</source>
        <translation>Images</translation>
    </message>
    <message>
        <source>Storage</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <source>Object storage (S3)</source>
        <translation>Objektspeicher (S3)</translation>
    </message>
    <message>
        <source>KubeRay</source>
        <translation>KubeRay</translation>
    </message>
    <message>
        <source>API server</source>
        <translation>API-Server</translation>
    </message>
    <message>
        <source>URL of the Kubernetes API server, e.g. https://api.example.com:6443. Required to connect. Plain http:// is accepted only for this machine (kubectl proxy on 127.0.0.1), since the token would otherwise cross the network unencrypted.</source>
        <translation>URL des Kubernetes-API-Servers, z. B. https://api.example.com:6443. Für die Verbindung erforderlich. Unverschlüsseltes http:// wird nur für diesen Rechner akzeptiert (kubectl proxy auf 127.0.0.1), da das Token sonst unverschlüsselt über das Netzwerk ginge.</translation>
    </message>
    <message>
        <source>Namespace</source>
        <translation>Namespace</translation>
    </message>
    <message>
        <source>Namespace where RayJobs, their pods and playground pods are created.</source>
        <translation>Namespace, in dem RayJobs, ihre Pods und Playground-Pods erstellt werden.</translation>
    </message>
    <message>
        <source>Job owner</source>
        <translation>Job-Besitzer</translation>
    </message>
    <message>
        <source>Whose the jobs submitted with this profile are, recorded on each RayJob (starforge.dev/owner). The app archives, stops and deletes only its owner's jobs and shows everyone else's read-only. Empty: the user name the cluster knows the credentials by (a SelfSubjectReview), the same on every workstation.</source>
        <translation>Wem die mit diesem Profil eingereichten Jobs gehören; wird an jedem RayJob vermerkt (starforge.dev/owner). Die App archiviert, stoppt und löscht nur die Jobs ihres Besitzers und zeigt die aller anderen schreibgeschützt an. Leer: der Benutzername, unter dem der Cluster die Anmeldedaten kennt (per SelfSubjectReview), auf jeder Workstation derselbe.</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>Backend</translation>
    </message>
    <message>
        <source>Which backend runs jobs. Only kuberay (one ephemeral RayCluster per job, as a RayJob) exists.</source>
        <translation>Welches Backend Jobs ausführt. Es gibt nur kuberay (ein kurzlebiger RayCluster pro Job, als RayJob).</translation>
    </message>
    <message>
        <source>Token</source>
        <translation>Token</translation>
    </message>
    <message>
        <source>Bearer token (e.g. a ServiceAccount token) with RayJob and Pod permissions in the namespace. Kept only in the OS keychain.</source>
        <translation>Bearer-Token (z. B. ein ServiceAccount-Token) mit RayJob- und Pod-Berechtigungen im Namespace. Wird nur im Schlüsselbund des Betriebssystems gespeichert.</translation>
    </message>
    <message>
        <source>Token file</source>
        <translation>Token-Datei</translation>
    </message>
    <message>
        <source>A file to read the bearer token from at every connect, as kubeconfig's tokenFile. Used when FORGE_K8S_TOKEN is not set.</source>
        <translation>Eine Datei, aus der das Bearer-Token bei jedem Verbindungsaufbau gelesen wird, wie tokenFile der kubeconfig. Wird verwendet, wenn FORGE_K8S_TOKEN nicht gesetzt ist.</translation>
    </message>
    <message>
        <source>Client certificate file</source>
        <translation>Client-Zertifikatsdatei</translation>
    </message>
    <message>
        <source>PEM file of the client certificate presented in the TLS handshake (kubeconfig's client-certificate; kind, minikube and kubeadm's admin.conf sign in this way). Needs a client key.</source>
        <translation>PEM-Datei des Client-Zertifikats, das beim TLS-Handshake vorgelegt wird (client-certificate der kubeconfig; kind, minikube und die admin.conf von kubeadm melden sich so an). Benötigt einen Client-Schlüssel.</translation>
    </message>
    <message>
        <source>Client certificate (inline)</source>
        <translation>Client-Zertifikat (inline)</translation>
    </message>
    <message>
        <source>The same certificate as base64 of the PEM text (client-certificate-data). Takes precedence over FORGE_K8S_CLIENT_CERT_FILE.</source>
        <translation>Dasselbe Zertifikat als Base64 des PEM-Texts (client-certificate-data). Hat Vorrang vor FORGE_K8S_CLIENT_CERT_FILE.</translation>
    </message>
    <message>
        <source>Client key file</source>
        <translation>Client-Schlüsseldatei</translation>
    </message>
    <message>
        <source>PEM file of the client certificate's private key, RSA or EC, unencrypted (client-key). The path is kept, never the key.</source>
        <translation>PEM-Datei des privaten Schlüssels zum Client-Zertifikat, RSA oder EC, unverschlüsselt (client-key). Gespeichert wird der Pfad, nie der Schlüssel.</translation>
    </message>
    <message>
        <source>Client key (inline)</source>
        <translation>Client-Schlüssel (inline)</translation>
    </message>
    <message>
        <source>The client key as base64 of the PEM text (client-key-data). Kept only in the OS keychain; takes precedence over FORGE_K8S_CLIENT_KEY_FILE.</source>
        <translation>Der Client-Schlüssel als Base64 des PEM-Texts (client-key-data). Wird nur im Schlüsselbund des Betriebssystems gespeichert; hat Vorrang vor FORGE_K8S_CLIENT_KEY_FILE.</translation>
    </message>
    <message>
        <source>Credential plugin</source>
        <translation>Anmelde-Plugin</translation>
    </message>
    <message>
        <source>An exec credential plugin, as the kubeconfig's user.exec in JSON: apiVersion, command, args, env, interactiveMode, provideClusterInfo, installHint (aws eks get-token, gke-gcloud-auth-plugin, kubelogin). Run as kubectl runs it; its token or certificate stays in memory. Takes precedence over tokens.</source>
        <translation>Ein Exec-Anmelde-Plugin, wie user.exec der kubeconfig in JSON: apiVersion, command, args, env, interactiveMode, provideClusterInfo, installHint (aws eks get-token, gke-gcloud-auth-plugin, kubelogin). Wird so ausgeführt wie von kubectl; sein Token oder Zertifikat bleibt im Arbeitsspeicher. Hat Vorrang vor Tokens.</translation>
    </message>
    <message>
        <source>CA certificates file</source>
        <translation>CA-Zertifikatsdatei</translation>
    </message>
    <message>
        <source>PEM file with the CA certificates that sign the API server's certificate. Without it (and without FORGE_K8S_CA_DATA) the system CA store is used.</source>
        <translation>PEM-Datei mit den CA-Zertifikaten, die das Zertifikat des API-Servers signieren. Ohne sie (und ohne FORGE_K8S_CA_DATA) wird der CA-Speicher des Systems verwendet.</translation>
    </message>
    <message>
        <source>CA certificates (inline)</source>
        <translation>CA-Zertifikate (inline)</translation>
    </message>
    <message>
        <source>The same CA bundle as base64 of the PEM text (kubeconfig's certificate-authority-data). Takes precedence over FORGE_K8S_CA_FILE.</source>
        <translation>Dasselbe CA-Bundle als Base64 des PEM-Texts (certificate-authority-data der kubeconfig). Hat Vorrang vor FORGE_K8S_CA_FILE.</translation>
    </message>
    <message>
        <source>TLS server name</source>
        <translation>TLS-Servername</translation>
    </message>
    <message>
        <source>Server name to verify the API server's certificate against and send in SNI, when it differs from the URL's host (kubeconfig's tls-server-name).</source>
        <translation>Servername, gegen den das Zertifikat des API-Servers geprüft und der per SNI gesendet wird, wenn er vom Host der URL abweicht (tls-server-name der kubeconfig).</translation>
    </message>
    <message>
        <source>Proxy</source>
        <translation>Proxy</translation>
    </message>
    <message>
        <source>Proxy for the API server: http:// or socks5:// (kubeconfig's proxy-url); socks5 proxies resolve host names, as with kubectl. Empty: HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the environment, as kubectl reads them.</source>
        <translation>Proxy für den API-Server: http:// oder socks5:// (proxy-url der kubeconfig); socks5-Proxys lösen Hostnamen auf, wie bei kubectl. Leer: HTTPS_PROXY, HTTP_PROXY und NO_PROXY aus der Umgebung, wie kubectl sie liest.</translation>
    </message>
    <message>
        <source>Skip certificate check</source>
        <translation>Zertifikatsprüfung überspringen</translation>
    </message>
    <message>
        <source>Skip verifying the API server's certificate. Only for throw-away clusters: the window shows a warning while it is on.</source>
        <translation>Die Überprüfung des Zertifikats des API-Servers überspringen. Nur für Wegwerf-Cluster: Das Fenster zeigt eine Warnung an, solange dies aktiviert ist.</translation>
    </message>
    <message>
        <source>GPU series node label</source>
        <translation>Knoten-Label der GPU-Serie</translation>
    </message>
    <message>
        <source>Node label whose value is the GPU series (h200, h100, ...). One source for capacity figures and for the nodeSelector of every pool.</source>
        <translation>Knoten-Label, dessen Wert die GPU-Serie ist (h200, h100, ...). Einzige Quelle für die Kapazitätswerte und für den nodeSelector jedes Pools.</translation>
    </message>
    <message>
        <source>Request GPUs from Kubernetes</source>
        <translation>GPUs bei Kubernetes anfordern</translation>
    </message>
    <message>
        <source>Request nvidia.com/gpu for Ray pods. false only for GPU-less test clusters (kind, CI): Ray's logical GPUs stay.</source>
        <translation>nvidia.com/gpu für Ray-Pods anfordern. false nur für Testcluster ohne GPUs (kind, CI): Die logischen GPUs von Ray bleiben erhalten.</translation>
    </message>
    <message>
        <source>Shared memory per pod</source>
        <translation>Gemeinsamer Speicher pro Pod</translation>
    </message>
    <message>
        <source>Size of the in-memory /dev/shm volume of every Ray pod; Ray's object store lives there.</source>
        <translation>Größe des speicherresidenten /dev/shm-Volumes jedes Ray-Pods; dort liegt der Object Store von Ray.</translation>
    </message>
    <message>
        <source>NeMo-RL image</source>
        <translation>NeMo-RL-Image</translation>
    </message>
    <message>
        <source>Container image of the head, worker and submitter pods: NeMo-RL with Ray.</source>
        <translation>Container-Image der Head-, Worker- und Submitter-Pods: NeMo-RL mit Ray.</translation>
    </message>
    <message>
        <source>NeMo-RL folder in the image</source>
        <translation>NeMo-RL-Ordner im Image</translation>
    </message>
    <message>
        <source>Where NeMo-RL is installed inside the image; the runner starts its examples/ scripts from there.</source>
        <translation>Wo NeMo-RL im Image installiert ist; der Runner startet von dort die Skripte in examples/.</translation>
    </message>
    <message>
        <source>vLLM image</source>
        <translation>vLLM-Image</translation>
    </message>
    <message>
        <source>Container image of playground pods, serving an OpenAI-compatible API with vLLM.</source>
        <translation>Container-Image der Playground-Pods, das mit vLLM eine OpenAI-kompatible API bereitstellt.</translation>
    </message>
    <message>
        <source>Storage root in pods</source>
        <translation>Speicher-Stammverzeichnis in Pods</translation>
    </message>
    <message>
        <source>The one storage root inside pods: jobs/&lt;id&gt;/ checkpoints and logs go under it.</source>
        <translation>Das einzige Speicher-Stammverzeichnis in den Pods: Checkpoints und Logs unter jobs/&lt;id&gt;/ liegen darin.</translation>
    </message>
    <message>
        <source>Storage claim</source>
        <translation>Speicher-Claim</translation>
    </message>
    <message>
        <source>PersistentVolumeClaim mounted at the storage root in every Ray pod.</source>
        <translation>PersistentVolumeClaim, der in jedem Ray-Pod am Speicher-Stammverzeichnis eingebunden wird.</translation>
    </message>
    <message>
        <source>Claim shared between nodes</source>
        <translation>Claim zwischen Knoten geteilt</translation>
    </message>
    <message>
        <source>Whether the storage claim is shared between nodes (ReadWriteMany). When false, jobs with more than one node are rejected before submission.</source>
        <translation>Ob der Speicher-Claim zwischen Knoten geteilt wird (ReadWriteMany). Bei false werden Jobs mit mehr als einem Knoten vor dem Einreichen abgelehnt.</translation>
    </message>
    <message>
        <source>Claim mount path</source>
        <translation>Einbindungspfad des Claims</translation>
    </message>
    <message>
        <source>Mount path of the storage claim when pods cannot mount it at the storage root. Empty: mount at FORGE_STORAGE_ROOT.</source>
        <translation>Einbindungspfad des Speicher-Claims, wenn Pods ihn nicht am Speicher-Stammverzeichnis einbinden können. Leer: Einbindung unter FORGE_STORAGE_ROOT.</translation>
    </message>
    <message>
        <source>Corpus claim</source>
        <translation>Korpus-Claim</translation>
    </message>
    <message>
        <source>Optional read-only claim with training corpora, mounted into Ray pods of jobs that ask for it.</source>
        <translation>Optionaler schreibgeschützter Claim mit Trainingskorpora, der in die Ray-Pods von Jobs eingebunden wird, die ihn anfordern.</translation>
    </message>
    <message>
        <source>Endpoint</source>
        <translation>Endpunkt</translation>
    </message>
    <message>
        <source>URL of the S3-compatible object store that carries Capsules, logs and job history. https:// gives presigned working_dir URLs; http:// switches to the init-container download.</source>
        <translation>URL des S3-kompatiblen Objektspeichers, der Capsules, Logs und den Job-Verlauf enthält. https:// ergibt vorsignierte working_dir-URLs; http:// wechselt zum Download per Init-Container.</translation>
    </message>
    <message>
        <source>Bucket</source>
        <translation>Bucket</translation>
    </message>
    <message>
        <source>Bucket for capsules/&lt;sha256&gt;.zip and jobs/&lt;id&gt;/.</source>
        <translation>Bucket für capsules/&lt;sha256&gt;.zip und jobs/&lt;id&gt;/.</translation>
    </message>
    <message>
        <source>Region</source>
        <translation>Region</translation>
    </message>
    <message>
        <source>Region used in SigV4 signatures. Most S3-compatible servers accept us-east-1.</source>
        <translation>In SigV4-Signaturen verwendete Region. Die meisten S3-kompatiblen Server akzeptieren us-east-1.</translation>
    </message>
    <message>
        <source>Path-style addressing</source>
        <translation>Pfadbasierte Adressierung</translation>
    </message>
    <message>
        <source>Address buckets as endpoint/bucket/key (path style) rather than bucket.endpoint/key (virtual-host style). Most self-hosted servers need path style.</source>
        <translation>Buckets als endpoint/bucket/key (Pfad-Stil) statt als bucket.endpoint/key (Virtual-Host-Stil) adressieren. Die meisten selbst gehosteten Server benötigen den Pfad-Stil.</translation>
    </message>
    <message>
        <source>PEM file of the CA that signed the S3 endpoint's certificate, for a self-hosted store. Without it the system CA store is used.</source>
        <translation>PEM-Datei der CA, die das Zertifikat des S3-Endpunkts signiert hat, für einen selbst gehosteten Speicher. Ohne sie wird der CA-Speicher des Systems verwendet.</translation>
    </message>
    <message>
        <source>Proxy for the object store: http:// or socks5://. Empty: HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the environment.</source>
        <translation>Proxy für den Objektspeicher: http:// oder socks5://. Leer: HTTPS_PROXY, HTTP_PROXY und NO_PROXY aus der Umgebung.</translation>
    </message>
    <message>
        <source>Access key</source>
        <translation>Zugriffsschlüssel</translation>
    </message>
    <message>
        <source>S3 access key id. Kept only in the OS keychain.</source>
        <translation>S3-Zugriffsschlüssel-ID. Wird nur im Schlüsselbund des Betriebssystems gespeichert.</translation>
    </message>
    <message>
        <source>Secret key</source>
        <translation>Geheimer Schlüssel</translation>
    </message>
    <message>
        <source>S3 secret access key. Kept only in the OS keychain.</source>
        <translation>Geheimer S3-Zugriffsschlüssel. Wird nur im Schlüsselbund des Betriebssystems gespeichert.</translation>
    </message>
    <message>
        <source>Ray version</source>
        <translation>Ray-Version</translation>
    </message>
    <message>
        <source>rayVersion of every RayCluster: the Ray release in the image, compatible with the operator.</source>
        <translation>rayVersion jedes RayClusters: die Ray-Version im Image, kompatibel mit dem Operator.</translation>
    </message>
    <message>
        <source>Keep a finished cluster (s)</source>
        <translation>Beendeten Cluster behalten (s)</translation>
    </message>
    <message>
        <source>ttlSecondsAfterFinished: seconds the operator keeps a finished job's RayCluster (the head and worker pods with their logs) before deleting it, whether or not the logs were archived. Logs are archived only while the app or `starforge-cli jobs --follow` runs, so this is how long a finished job may wait for one of them; past it the head and worker logs are lost. Meanwhile the job's idle Ray pods keep their GPUs.</source>
        <translation>ttlSecondsAfterFinished: Sekunden, die der Operator den RayCluster eines beendeten Jobs (die Head- und Worker-Pods mit ihren Logs) behält, bevor er ihn löscht, unabhängig davon, ob die Logs archiviert wurden. Logs werden nur archiviert, solange die App oder `starforge-cli jobs --follow` läuft; so lange kann ein beendeter Job also auf eines von beiden warten, danach sind die Head- und Worker-Logs verloren. In dieser Zeit belegen die untätigen Ray-Pods des Jobs weiterhin ihre GPUs.</translation>
    </message>
    <message>
        <source>Start deadline (s)</source>
        <translation>Startfrist (s)</translation>
    </message>
    <message>
        <source>Seconds a job may spend before running (image pulls, scheduling) before it is failed and deleted, with the events that explain why kept.</source>
        <translation>Sekunden, die ein Job vor dem Start (Image-Abrufe, Einplanung) verbringen darf, bevor er als fehlgeschlagen beendet und gelöscht wird; die Ereignisse, die den Grund erklären, bleiben erhalten.</translation>
    </message>
    <message>
        <source>Which Kubernetes cluster and namespace jobs go to, and whose they are.</source>
        <translation>In welchen Kubernetes-Cluster und Namespace Jobs gehen und wem sie gehören.</translation>
    </message>
    <message>
        <source>How the app proves who you are to the API server: one of a token, a client certificate or a credential plugin.</source>
        <translation>Wie die App dem API-Server nachweist, wer Sie sind: mit einem Token, einem Client-Zertifikat oder einem Anmelde-Plugin.</translation>
    </message>
    <message>
        <source>How the API server's certificate is checked and which proxy reaches it.</source>
        <translation>Wie das Zertifikat des API-Servers geprüft wird und über welchen Proxy er erreicht wird.</translation>
    </message>
    <message>
        <source>How GPU nodes are recognised and what every Ray pod is given.</source>
        <translation>Wie GPU-Knoten erkannt werden und was jeder Ray-Pod erhält.</translation>
    </message>
    <message>
        <source>The container images training jobs and playground pods run.</source>
        <translation>Die Container-Images, die Trainingsjobs und Playground-Pods ausführen.</translation>
    </message>
    <message>
        <source>The shared volume in the pods where checkpoints and logs are written.</source>
        <translation>Das gemeinsame Volume in den Pods, in das Checkpoints und Logs geschrieben werden.</translation>
    </message>
    <message>
        <source>The bucket that carries your code to the cluster and keeps job history and archived logs.</source>
        <translation>Der Bucket, der Ihren Code zum Cluster bringt und den Job-Verlauf sowie archivierte Logs aufbewahrt.</translation>
    </message>
    <message>
        <source>What every RayJob asks of the KubeRay operator: the Ray release, deadlines and clean-up.</source>
        <translation>Was jeder RayJob vom KubeRay-Operator verlangt: die Ray-Version, Fristen und Aufräumen.</translation>
    </message>
    <message>
        <source>text</source>
        <translation>Text</translation>
    </message>
    <message>
        <source>choice</source>
        <translation>Auswahl</translation>
    </message>
    <message>
        <source>URL</source>
        <translation>URL</translation>
    </message>
    <message>
        <source>Kubernetes quantity</source>
        <translation>Kubernetes-Mengenangabe</translation>
    </message>
    <message>
        <source>label key</source>
        <translation>Label-Schlüssel</translation>
    </message>
    <message>
        <source>DNS-1123 label</source>
        <translation>DNS-1123-Label</translation>
    </message>
    <message>
        <source>DNS-1123 subdomain</source>
        <translation>DNS-1123-Subdomain</translation>
    </message>
    <message>
        <source>integer</source>
        <translation>Ganzzahl</translation>
    </message>
    <message>
        <source>boolean</source>
        <translation>Wahrheitswert</translation>
    </message>
    <message>
        <source>absolute path</source>
        <translation>absoluter Pfad</translation>
    </message>
    <message>
        <source>image reference</source>
        <translation>Image-Referenz</translation>
    </message>
    <message>
        <source>bucket name</source>
        <translation>Bucket-Name</translation>
    </message>
    <message>
        <source>version</source>
        <translation>Version</translation>
    </message>
    <message>
        <source>PEM file</source>
        <translation>PEM-Datei</translation>
    </message>
    <message>
        <source>base64 PEM</source>
        <translation>Base64-PEM</translation>
    </message>
    <message>
        <source>proxy URL</source>
        <translation>Proxy-URL</translation>
    </message>
    <message>
        <source>exec plugin (JSON)</source>
        <translation>Exec-Plugin (JSON)</translation>
    </message>
    <message>
        <source>secret (keychain)</source>
        <translation>Geheimnis (Schlüsselbund)</translation>
    </message>
    <message>
        <source>%1 must not be empty; its default is '%2'</source>
        <translation>%1 darf nicht leer sein; der Standardwert ist '%2'</translation>
    </message>
    <message>
        <source>'%1' is not one of: %2</source>
        <translation>'%1' ist keiner der zulässigen Werte: %2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>%1 is not a setting; `starforge-cli settings` lists them</source>
        <translation>%1 ist keine Einstellung; `starforge-cli settings` listet sie auf</translation>
    </message>
    <message>
        <source>%1 is not a setting (did you mean %2?); `starforge-cli settings` lists them</source>
        <translation>%1 ist keine Einstellung (meinten Sie %2?); `starforge-cli settings` listet sie auf</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::BuildCommand</name>
    <message>
        <source>--kuberay-version takes a KubeRay release, e.g. --kuberay-version 1.7</source>
        <translation>--kuberay-version erwartet eine KubeRay-Version, z. B. --kuberay-version 1.7</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::CapacityCommand</name>
    <message>
        <source>usage: starforge-cli capacity [--spec SPEC] [--json]</source>
        <translation>Verwendung: starforge-cli capacity [--spec SPEC] [--json]</translation>
    </message>
    <message>
        <source>no GPU nodes: no node has the series label %1 (FORGE_K8S_GPU_NODE_LABEL)</source>
        <translation>keine GPU-Knoten: Kein Knoten hat das Serien-Label %1 (FORGE_K8S_GPU_NODE_LABEL)</translation>
    </message>
    <message numerus="yes">
        <source> (%n node(s))</source>
        <translation><numerusform> (%n Knoten)</numerusform><numerusform> (%n Knoten)</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::CapsuleBuildCommand</name>
    <message>
        <source>usage: starforge-cli capsule build DIR [--spec SPEC] [--out FILE] [--json]</source>
        <translation>Verwendung: starforge-cli capsule build DIR [--spec SPEC] [--out FILE] [--json]</translation>
    </message>
    <message>
        <source>%1 is not a folder; give the code folder to pack.</source>
        <translation>%1 ist kein Ordner; geben Sie den zu packenden Code-Ordner an.</translation>
    </message>
    <message>
        <source>minimal (no --spec given), name %1</source>
        <translation>minimal (kein --spec angegeben), Name %1</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::ChatCommand</name>
    <message>
        <source>usage: starforge-cli playground chat NAME [PROMPT...] [--system S] [--temperature T] [--top-p P] [--max-tokens N] [--session FILE]</source>
        <translation>Verwendung: starforge-cli playground chat NAME [PROMPT...] [--system S] [--temperature T] [--top-p P] [--max-tokens N] [--session FILE]</translation>
    </message>
    <message>
        <source>no prompt: give it after NAME or on standard input</source>
        <translation>kein Prompt: Geben Sie ihn nach NAME oder über die Standardeingabe an</translation>
    </message>
    <message>
        <source>--temperature, --top-p and --max-tokens take numbers</source>
        <translation>--temperature, --top-p und --max-tokens erwarten Zahlen</translation>
    </message>
    <message>
        <source>%1 is a conversation with nothing readable, not %2; give another --session file</source>
        <translation>%1 ist eine Unterhaltung ohne lesbaren Pod, nicht mit %2; geben Sie eine andere --session-Datei an</translation>
    </message>
    <message>
        <source>%1 is a conversation with %2, not %3; give another --session file</source>
        <translation>%1 ist eine Unterhaltung mit %2, nicht mit %3; geben Sie eine andere --session-Datei an</translation>
    </message>
    <message>
        <source>no playground pod of yours named %1 (see `starforge-cli playground list`)</source>
        <translation>Sie haben keinen Playground-Pod namens %1 (siehe `starforge-cli playground list`)</translation>
    </message>
    <message numerus="yes">
        <source>%n token(s), first after %1 ms, %2 tokens/s</source>
        <translation><numerusform>%n Token, erstes nach %1 ms, %2 Tokens/s</numerusform><numerusform>%n Tokens, erstes nach %1 ms, %2 Tokens/s</numerusform></translation>
    </message>
    <message numerus="yes">
        <source>%n token(s), first after %1 ms, %2 tokens/s (%3)</source>
        <translation><numerusform>%n Token, erstes nach %1 ms, %2 Tokens/s (%3)</numerusform><numerusform>%n Tokens, erstes nach %1 ms, %2 Tokens/s (%3)</numerusform></translation>
    </message>
    <message>
        <source>cannot write %1: %2</source>
        <translation>%1 kann nicht geschrieben werden: %2</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::CliApplication</name>
    <message>
        <source>%1 needs a subcommand: %2</source>
        <translation>%1 benötigt einen Unterbefehl: %2</translation>
    </message>
    <message>
        <source>unknown subcommand '%1 %2'; use %3</source>
        <translation>unbekannter Unterbefehl '%1 %2'; verwenden Sie %3</translation>
    </message>
    <message>
        <source>unknown command '%1'; commands: %2 (see --help)</source>
        <translation>unbekannter Befehl '%1'; Befehle: %2 (siehe --help)</translation>
    </message>
    <message>
        <source>usage: starforge-cli [--profile NAME | --connection-file FILE] [--config FILE] [--json] COMMAND ...
</source>
        <translation>Verwendung: starforge-cli [--profile NAME | --connection-file FILE] [--config FILE] [--json] COMMAND ...
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
        <translation>Playground (eigene vLLM-Pods, erreichbar über den Pod-Proxy des API-Servers):
  playground launch (--model PATH|NAME | --job ID [--step N]) [--series S] [--gpus N] [--ttl 2h] [--wait]
                                       ein Modell bereitstellen oder den neuesten chatbereiten Checkpoint eines beendeten Jobs
  playground list                      Ihre Playground-Pods: Zustand, Modell, Serie, GPUs, Restzeit
  playground stop NAME                 einen davon löschen (abgelaufene und beendete werden ohnehin aufgeräumt)
  playground chat NAME [PROMPT] [--system S] [--temperature T] [--top-p P] [--max-tokens N] [--session FILE]
                                       eine Antwort streamen (PROMPT oder stdin); --session speichert die Unterhaltung
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
        <translation>Geheimnisse (FORGE_K8S_TOKEN, FORGE_S3_ACCESS_KEY, FORGE_S3_SECRET_KEY) liegen nur im Schlüsselbund des Betriebssystems
und werden nie als KEY=VALUE-Argumente angenommen. Umgebungsvariablen FORGE_* überschreiben Profilwerte.
Das Profil ist --profile, sonst $STARFORGE_PROFILE, sonst das aktive. Exit-Codes: 0 OK,
1 Benutzerfehler, 2 interner Fehler, 3 der mit submit --wait verfolgte Job endete mit Failed oder Stopped,
130 unterbrochen (Strg+C bricht eine laufende Einreichung ab und entfernt, was sie erstellt hat).
Meldungen erscheinen in der Sprache von $STARFORGE_LANGUAGE (z. B. de, zh_CN, en), sonst in der des Systems;
die Ausgabe von --json bleibt englisch.
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
        <translation>Befehle:
  profile list                         die Profile; das aktive ist markiert
  profile show [NAME]                  wirksame Einstellungen und woher jede stammt
  profile set NAME KEY=VALUE...        Einstellungen setzen (legt NAME an); KEY= setzt auf den Standardwert zurück
  profile set NAME KEY --stdin         den Wert (z. B. ein Geheimnis) von der Standardeingabe lesen
  profile set NAME KEY --from-env      den Wert der Umgebungsvariable KEY speichern (z. B. ein Geheimnis)
  profile import-kubeconfig [FILE] [--context C] [--name NAME]
                                       ein Profil aus einem kubeconfig-Kontext erstellen oder aktualisieren
  profile use NAME                     NAME zum aktiven Profil machen
  profile rename OLD NEW | duplicate SOURCE NEW | delete NAME [--force]
  capsule build DIR [--spec SPEC] [--out FILE]
                                       DIR als Capsule packen (Standard: ./capsule.zip), mit SPEC,
                                       sonst DIR/jobspec.json, sonst einer minimalen JobSpec; gibt
                                       ihren SHA-256, ihre Größe und die Anzahl der Dateien aus
  settings [--markdown]                alle Einstellungen: Typ, Standardwert, Bedeutung
  check                                die Verbindung testen: API-Server, Anmeldung, KubeRay, was das
                                       Token je Funktion darf, den Bucket (Exit-Code 1, wenn ein Teil fehlschlägt)
  cluster-setup [--namespace NS] [--user NAME]
                                       das YAML, das ein Cluster-Administrator anwendet (kubectl apply -f -):
                                       Namespace, ServiceAccount NAME (Standard: starforge-user) und sein
                                       Token-Secret, die Role und ClusterRole, die jede Funktion braucht, daran
                                       gebunden; NS ist standardmäßig FORGE_K8S_NAMESPACE des Profils
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
        <translation>Jobs (im Cluster und Bucket des Profils oder, mit --connection-file FILE, in denen der Sandbox;
JOB ist eine Job-ID oder der Name des RayJobs):
  manifest SPEC [--kuberay-version V]  der RayJob, den SPEC erzeugen würde, als JSON; nichts wird eingereicht
  submit SPEC [--wait] [--force]       den Job bauen, hochladen und erstellen; --wait verfolgt ihn, bis er
                                       archiviert ist (Exit-Code 0 Succeeded, 3 Failed oder Stopped); ein Job,
                                       der nie auf den Cluster passen kann, wird ohne --force abgelehnt
  jobs [--follow]                      die Jobs im Cluster und ihre Zustände; --follow archiviert
                                       fortlaufend jeden endenden Job, je eine Zeile, bis Strg+C
  status JOB                           Zustand, Zeiten, Pods und warum er noch nicht läuft
  events JOB [--timeline]              die Kubernetes-Ereignisse des Jobs, älteste zuerst; --timeline zeichnet
                                       sie auf Spuren je Objekt über den Phasen des Jobs
  diagnose JOB                         die Ursache, warum ein Job nicht läuft, mit Belegen
  logs JOB [-f] [--pod P] [--container C] [--tail N] [--grep PATTERN [-i] [-E] [--count]]
                                       das Log des Treibers (P: ein Pod, submitter, head oder worker);
                                       aus dem Archiv, sobald der Job beendet ist
  capacity [--spec SPEC]               GPUs je Serie: gesamt, belegt, frei, blockiert, größter freier Knoten;
                                       mit SPEC, ob seine Pools jetzt passen, sobald belegte Knoten frei werden, oder nie
  stop JOB                             einen Job stoppen; seine Logs und Ereignisse werden zuerst archiviert
  delete JOB                           einen Job und sein Archiv entfernen (die Capsule bleibt)
  history                              archivierte Jobs, neueste zuerst
</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::ClusterSetupCommand</name>
    <message>
        <source>usage: starforge-cli cluster-setup [--namespace NS] [--user NAME]</source>
        <translation>Verwendung: starforge-cli cluster-setup [--namespace NS] [--user NAME]</translation>
    </message>
    <message>
        <source>--namespace</source>
        <translation>--namespace</translation>
    </message>
    <message>
        <source>there is no profile '%1' (see `starforge-cli profile list`)</source>
        <translation>es gibt kein Profil '%1' (siehe `starforge-cli profile list`)</translation>
    </message>
    <message>
        <source>the environment (FORGE_K8S_NAMESPACE)</source>
        <translation>Umgebung (FORGE_K8S_NAMESPACE)</translation>
    </message>
    <message>
        <source>profile %1</source>
        <translation>Profil %1</translation>
    </message>
    <message>
        <source>the default of FORGE_K8S_NAMESPACE</source>
        <translation>Standardwert von FORGE_K8S_NAMESPACE</translation>
    </message>
    <message>
        <source>namespace %1 (from %2), ServiceAccount %3; apply with `kubectl apply -f -`, then give the token in Secret %4 to the researchers' profiles (docs/cluster-setup.md).</source>
        <translation>Namespace %1 (Quelle: %2), ServiceAccount %3; wenden Sie dies mit `kubectl apply -f -` an und tragen Sie dann das Token aus Secret %4 in die Profile der Forschenden ein (docs/cluster-setup.md).</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::Command</name>
    <message>
        <source>warning: TLS verification is off (FORGE_K8S_INSECURE_SKIP_TLS_VERIFY): anyone on the network path to %1 can read and change what is sent, the token included. Use it only with throw-away clusters.</source>
        <translation>Warnung: Die TLS-Überprüfung ist deaktiviert (FORGE_K8S_INSECURE_SKIP_TLS_VERIFY): Jeder auf dem Netzwerkpfad zu %1 kann mitlesen und verändern, was gesendet wird, einschließlich des Tokens. Verwenden Sie dies nur mit Wegwerf-Clustern.</translation>
    </message>
    <message>
        <source>note: %1</source>
        <translation>Hinweis: %1</translation>
    </message>
    <message>
        <source>give --profile or --connection-file, not both</source>
        <translation>geben Sie --profile oder --connection-file an, nicht beides</translation>
    </message>
    <message>
        <source>no connection profile is active: pass --profile NAME or --connection-file FILE (the sandbox's), or make one with `starforge-cli profile import-kubeconfig`</source>
        <translation>kein Verbindungsprofil aktiv: Geben Sie --profile NAME oder --connection-file FILE (die der Sandbox) an oder legen Sie eines mit `starforge-cli profile import-kubeconfig` an</translation>
    </message>
    <message>
        <source>there is no profile '%1' (see `starforge-cli profile list`)</source>
        <translation>es gibt kein Profil '%1' (siehe `starforge-cli profile list`)</translation>
    </message>
    <message>
        <source>usage: starforge-cli %1</source>
        <translation>Verwendung: starforge-cli %1</translation>
    </message>
    <message>
        <source>'%1' is not a job id or a RayJob name (see `starforge-cli jobs` and `starforge-cli history`)</source>
        <translation>'%1' ist weder eine Job-ID noch ein RayJob-Name (siehe `starforge-cli jobs` und `starforge-cli history`)</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::DeleteCommand</name>
    <message numerus="yes">
        <source>deleted job %1: its RayJob and its archive (%n object(s))</source>
        <translation><numerusform>Job %1 gelöscht: sein RayJob und sein Archiv (%n Objekt)</numerusform><numerusform>Job %1 gelöscht: sein RayJob und sein Archiv (%n Objekte)</numerusform></translation>
    </message>
    <message>
        <source>deleted job %1: its RayJob</source>
        <translation>Job %1 gelöscht: sein RayJob</translation>
    </message>
    <message numerus="yes">
        <source>deleted job %1: its archive (%n object(s))</source>
        <translation><numerusform>Job %1 gelöscht: sein Archiv (%n Objekt)</numerusform><numerusform>Job %1 gelöscht: sein Archiv (%n Objekte)</numerusform></translation>
    </message>
    <message>
        <source>deleted job %1: </source>
        <translation>Job %1 gelöscht: </translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::EventsCommand</name>
    <message>
        <source>events: --json and --timeline are two different outputs; give one of them</source>
        <translation>events: --json und --timeline sind zwei verschiedene Ausgaben; geben Sie nur eine davon an</translation>
    </message>
    <message>
        <source>the event journal %1 is not read: %2</source>
        <translation>das Ereignisjournal %1 wird nicht gelesen: %2</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::HistoryCommand</name>
    <message>
        <source>usage: starforge-cli history [--json]</source>
        <translation>Verwendung: starforge-cli history [--json]</translation>
    </message>
    <message>
        <source>starforge-cli: skipped %1</source>
        <translation>starforge-cli: übersprungen: %1</translation>
    </message>
    <message>
        <source>no archived jobs in the bucket yet</source>
        <translation>noch keine archivierten Jobs im Bucket</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::JobCommand</name>
    <message>
        <source>job %1 is not on the cluster, and the archive cannot be read: %2</source>
        <translation>Job %1 ist nicht im Cluster, und das Archiv kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <source>job %1 is neither on the cluster nor in the job history</source>
        <translation>Job %1 ist weder im Cluster noch im Job-Verlauf</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::JobsCommand</name>
    <message>
        <source>usage: starforge-cli jobs [--follow] [--json]</source>
        <translation>Verwendung: starforge-cli jobs [--follow] [--json]</translation>
    </message>
    <message>
        <source>list the jobs in namespace %1</source>
        <translation>die Jobs im Namespace %1 auflisten</translation>
    </message>
    <message>
        <source>no jobs on the cluster in namespace %1 (ended jobs: starforge-cli history)</source>
        <translation>keine Jobs im Cluster im Namespace %1 (beendete Jobs: starforge-cli history)</translation>
    </message>
    <message>
        <source>stopped following; jobs that end from now on are archived by the app or the next `jobs --follow`</source>
        <translation>Verfolgung beendet; Jobs, die ab jetzt enden, archiviert die App oder das nächste `jobs --follow`</translation>
    </message>
    <message>
        <source>cannot follow jobs: %1</source>
        <translation>Jobs können nicht verfolgt werden: %1</translation>
    </message>
    <message>
        <source>cannot follow jobs: the job tracker is off</source>
        <translation>Jobs können nicht verfolgt werden: Der Job-Tracker ist deaktiviert</translation>
    </message>
    <message>
        <source>following the jobs in namespace %1; each job that ends is archived to the bucket (Ctrl-C to stop)</source>
        <translation>Jobs im Namespace %1 werden verfolgt; jeder Job, der endet, wird im Bucket archiviert (Strg+C zum Beenden)</translation>
    </message>
    <message>
        <source>archived %1 %2 %3</source>
        <translation>archiviert: %1 %2 %3</translation>
    </message>
    <message numerus="yes">
        <source>archived %1 %2 %3 (%n not archived)</source>
        <translation><numerusform>archiviert: %1 %2 %3 (%n Teil nicht archiviert)</numerusform><numerusform>archiviert: %1 %2 %3 (%n Teile nicht archiviert)</numerusform></translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::LaunchCommand</name>
    <message>
        <source>usage: starforge-cli playground launch (--model PATH|NAME | --job ID [--step N]) [--series S] [--gpus N] [--ttl 2h] [--wait]</source>
        <translation>Verwendung: starforge-cli playground launch (--model PATH|NAME | --job ID [--step N]) [--series S] [--gpus N] [--ttl 2h] [--wait]</translation>
    </message>
    <message>
        <source>give either --model or --job
%1</source>
        <translation>geben Sie entweder --model oder --job an
%1</translation>
    </message>
    <message>
        <source>--gpus takes a number of GPUs (the tensor parallel size)</source>
        <translation>--gpus erwartet eine Anzahl GPUs (die Tensor-Parallelgröße)</translation>
    </message>
    <message>
        <source>--ttl takes a duration such as 90m, 2h or 3600, not '%1'</source>
        <translation>--ttl erwartet eine Dauer wie 90m, 2h oder 3600, nicht '%1'</translation>
    </message>
    <message>
        <source>%1 (a job's checkpoints are served once it has ended)</source>
        <translation>%1 (die Checkpoints eines Jobs werden bereitgestellt, sobald er beendet ist)</translation>
    </message>
    <message>
        <source>job %1 belongs to nobody recorded; the playground serves only your own jobs' checkpoints</source>
        <translation>Job %1 hat keinen erfassten Besitzer; der Playground stellt nur Checkpoints Ihrer eigenen Jobs bereit</translation>
    </message>
    <message>
        <source>job %1 belongs to %2; the playground serves only your own jobs' checkpoints</source>
        <translation>Job %1 gehört %2; der Playground stellt nur Checkpoints Ihrer eigenen Jobs bereit</translation>
    </message>
    <message>
        <source>its %1 checkpoints have no Hugging Face weights and no converter</source>
        <translation>seine %1-Checkpoints haben keine Hugging-Face-Gewichte und keinen Konverter</translation>
    </message>
    <message>
        <source>its %1 checkpoints need NeMo-RL's %2 first</source>
        <translation>seine %1-Checkpoints benötigen zuerst %2 von NeMo-RL</translation>
    </message>
    <message>
        <source>job %1 has no checkpoint at step %2 vLLM can serve</source>
        <translation>Job %1 hat bei Schritt %2 keinen Checkpoint, den vLLM bereitstellen kann</translation>
    </message>
    <message>
        <source>job %1 has no checkpoint at step %2 vLLM can serve: %3</source>
        <translation>Job %1 hat bei Schritt %2 keinen Checkpoint, den vLLM bereitstellen kann: %3</translation>
    </message>
    <message>
        <source>job %1 has no checkpoint vLLM can serve</source>
        <translation>Job %1 hat keinen Checkpoint, den vLLM bereitstellen kann</translation>
    </message>
    <message>
        <source>job %1 has no checkpoint vLLM can serve: %2</source>
        <translation>Job %1 hat keinen Checkpoint, den vLLM bereitstellen kann: %2</translation>
    </message>
    <message>
        <source>%1 launched: %2 on %3</source>
        <translation>%1 gestartet: %2 auf %3</translation>
    </message>
    <message>
        <source>ask %1 for its health</source>
        <translation>den Zustand von %1 abfragen</translation>
    </message>
    <message>
        <source>%1 ready</source>
        <translation>%1 bereit</translation>
    </message>
    <message>
        <source>%1 ended before it was ready (%2); see `kubectl logs %1`</source>
        <translation>%1 wurde beendet, bevor er bereit war (%2); siehe `kubectl logs %1`</translation>
    </message>
    <message>
        <source>%1 is waiting: %2: %3</source>
        <translation>%1 wartet: %2: %3</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::LogsCommand</name>
    <message>
        <source>--count needs the whole log: leave out -f, or --count</source>
        <translation>--count benötigt das ganze Log: Lassen Sie -f oder --count weg</translation>
    </message>
    <message>
        <source>-i, -E and --count go with --grep PATTERN</source>
        <translation>-i, -E und --count gehören zu --grep PATTERN</translation>
    </message>
    <message>
        <source>--tail takes a number of lines, e.g. --tail 100, not '%1'</source>
        <translation>--tail erwartet eine Anzahl Zeilen, z. B. --tail 100, nicht '%1'</translation>
    </message>
    <message>
        <source>job %1 has no pods yet (see `starforge-cli status %1`)</source>
        <translation>Job %1 hat noch keine Pods (siehe `starforge-cli status %1`)</translation>
    </message>
    <message>
        <source>job %1 has no pod '%2'; its pods: %3</source>
        <translation>Job %1 hat keinen Pod '%2'; seine Pods: %3</translation>
    </message>
    <message>
        <source>cannot make a temporary file for the log: %1</source>
        <translation>für das Log kann keine temporäre Datei angelegt werden: %1</translation>
    </message>
    <message>
        <source>starforge-cli: pod %1 is gone (the job ended?); its archived log: starforge-cli logs %2</source>
        <translation>starforge-cli: Pod %1 existiert nicht mehr (Job beendet?); sein archiviertes Log: starforge-cli logs %2</translation>
    </message>
    <message>
        <source>%1 Gave up after %2 s.</source>
        <translation>%1 Nach %2 s aufgegeben.</translation>
    </message>
    <message>
        <source>starforge-cli: log interrupted (%1); reconnecting</source>
        <translation>starforge-cli: Log unterbrochen (%1); Verbindung wird wiederhergestellt</translation>
    </message>
    <message>
        <source>cannot make a temporary file for the archived log: %1</source>
        <translation>für das archivierte Log kann keine temporäre Datei angelegt werden: %1</translation>
    </message>
    <message>
        <source>%1 is not in the archive.</source>
        <translation>%1 ist nicht im Archiv.</translation>
    </message>
    <message>
        <source>cannot read the downloaded log %1: %2</source>
        <translation>das heruntergeladene Log %1 kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <source>job %1 is not on the cluster, and the archive cannot be read: %2</source>
        <translation>Job %1 ist nicht im Cluster, und das Archiv kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <source>job %1 was archived without logs</source>
        <translation>Job %1 wurde ohne Logs archiviert</translation>
    </message>
    <message>
        <source>job %1 was archived without logs: %2</source>
        <translation>Job %1 wurde ohne Logs archiviert: %2</translation>
    </message>
    <message>
        <source>the archive of job %1 has no log for '%2'; it has: %3</source>
        <translation>das Archiv von Job %1 enthält kein Log für '%2'; es enthält: %3</translation>
    </message>
    <message>
        <source>the archive of job %1 is damaged: its log %2/%3 is kept under '%4', outside %5</source>
        <translation>das Archiv von Job %1 ist beschädigt: Sein Log %2/%3 liegt unter '%4', außerhalb von %5</translation>
    </message>
    <message>
        <source>starforge-cli: job %1 has ended; showing its archived log</source>
        <translation>starforge-cli: Job %1 ist beendet; sein archiviertes Log wird angezeigt</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::PlaygroundCommand</name>
    <message>
        <source>the owner is unknown; set FORGE_OWNER (the playground acts only on your own pods)</source>
        <translation>der Besitzer ist unbekannt; setzen Sie FORGE_OWNER (der Playground verwaltet nur Ihre eigenen Pods)</translation>
    </message>
    <message>
        <source>reaped %1</source>
        <translation>aufgeräumt: %1</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::ProfileCommand</name>
    <message numerus="yes">
        <source>starforge-cli: note: moved %n secret(s) from the settings file into the keychain</source>
        <translation><numerusform>starforge-cli: Hinweis: %n Geheimnis aus der Einstellungsdatei in den Schlüsselbund verschoben</numerusform><numerusform>starforge-cli: Hinweis: %n Geheimnisse aus der Einstellungsdatei in den Schlüsselbund verschoben</numerusform></translation>
    </message>
    <message>
        <source>No profiles yet. Create one with `starforge-cli profile set NAME FORGE_K8S_API_SERVER=https://...` or `starforge-cli profile import-kubeconfig`.</source>
        <translation>Noch keine Profile. Legen Sie eines mit `starforge-cli profile set NAME FORGE_K8S_API_SERVER=https://...` oder `starforge-cli profile import-kubeconfig` an.</translation>
    </message>
    <message>
        <source>there is no profile named '%1'; `starforge-cli profile list` shows them</source>
        <translation>es gibt kein Profil namens '%1'; `starforge-cli profile list` zeigt die vorhandenen</translation>
    </message>
    <message>
        <source>(set)</source>
        <translation>(gesetzt)</translation>
    </message>
    <message>
        <source> (invalid: %1)</source>
        <translation> (ungültig: %1)</translation>
    </message>
    <message>
        <source>Profile: (none: defaults and environment only)</source>
        <translation>Profil: (keines: nur Standardwerte und Umgebung)</translation>
    </message>
    <message>
        <source>Profile: %1 (active)</source>
        <translation>Profil: %1 (aktiv)</translation>
    </message>
    <message>
        <source>Profile: %1</source>
        <translation>Profil: %1</translation>
    </message>
    <message>
        <source>starforge-cli: warning: secrets not shown: %1</source>
        <translation>starforge-cli: Warnung: Geheimnisse nicht angezeigt: %1</translation>
    </message>
    <message>
        <source>usage: starforge-cli profile set NAME KEY=VALUE... | NAME KEY --stdin | NAME KEY --from-env</source>
        <translation>Verwendung: starforge-cli profile set NAME KEY=VALUE... | NAME KEY --stdin | NAME KEY --from-env</translation>
    </message>
    <message>
        <source>use either --stdin or --from-env, not both</source>
        <translation>verwenden Sie entweder --stdin oder --from-env, nicht beides</translation>
    </message>
    <message>
        <source>with --stdin or --from-env give exactly one KEY, without '='</source>
        <translation>geben Sie mit --stdin oder --from-env genau einen KEY an, ohne '='</translation>
    </message>
    <message>
        <source>the environment variable %1 is not set</source>
        <translation>die Umgebungsvariable %1 ist nicht gesetzt</translation>
    </message>
    <message>
        <source>'%1' is not KEY=VALUE; write e.g. FORGE_K8S_NAMESPACE=ml-team</source>
        <translation>'%1' hat nicht die Form KEY=VALUE; schreiben Sie z. B. FORGE_K8S_NAMESPACE=ml-team</translation>
    </message>
    <message>
        <source>%1 is a secret and is not taken on the command line, where shell history and process listings would keep it; use `profile set %2 %1 --stdin` or --from-env</source>
        <translation>%1 ist ein Geheimnis und wird nicht auf der Befehlszeile angenommen, wo Shell-Verlauf und Prozesslisten es festhalten würden; verwenden Sie `profile set %2 %1 --stdin` oder --from-env</translation>
    </message>
    <message>
        <source>created profile %1</source>
        <translation>Profil %1 erstellt</translation>
    </message>
    <message>
        <source>updated profile %1</source>
        <translation>Profil %1 aktualisiert</translation>
    </message>
    <message>
        <source>created profile %1 (%2 in the keychain)</source>
        <translation>Profil %1 erstellt (%2 im Schlüsselbund)</translation>
    </message>
    <message>
        <source>updated profile %1 (%2 in the keychain)</source>
        <translation>Profil %1 aktualisiert (%2 im Schlüsselbund)</translation>
    </message>
    <message>
        <source>%1; choose a name with --name</source>
        <translation>%1; wählen Sie einen Namen mit --name</translation>
    </message>
    <message>
        <source>created profile %1 from context %2 (%3)</source>
        <translation>Profil %1 aus Kontext %2 erstellt (%3)</translation>
    </message>
    <message>
        <source>updated profile %1 from context %2 (%3)</source>
        <translation>Profil %1 aus Kontext %2 aktualisiert (%3)</translation>
    </message>
    <message>
        <source>note: %1</source>
        <translation>Hinweis: %1</translation>
    </message>
    <message>
        <source>usage: starforge-cli profile delete NAME [--force]</source>
        <translation>Verwendung: starforge-cli profile delete NAME [--force]</translation>
    </message>
    <message>
        <source>starforge-cli: warning: %1</source>
        <translation>starforge-cli: Warnung: %1</translation>
    </message>
    <message>
        <source>deleted profile %1</source>
        <translation>Profil %1 gelöscht</translation>
    </message>
    <message>
        <source>usage: starforge-cli profile use NAME</source>
        <translation>Verwendung: starforge-cli profile use NAME</translation>
    </message>
    <message>
        <source>active profile: %1</source>
        <translation>aktives Profil: %1</translation>
    </message>
    <message>
        <source>usage: starforge-cli profile rename OLD NEW</source>
        <translation>Verwendung: starforge-cli profile rename OLD NEW</translation>
    </message>
    <message>
        <source>renamed profile %1 to %2</source>
        <translation>Profil %1 in %2 umbenannt</translation>
    </message>
    <message>
        <source>usage: starforge-cli profile duplicate SOURCE NEW</source>
        <translation>Verwendung: starforge-cli profile duplicate SOURCE NEW</translation>
    </message>
    <message>
        <source>duplicated profile %1 as %2</source>
        <translation>Profil %1 als %2 dupliziert</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::StatusCommand</name>
    <message>
        <source>job %1 is not on the cluster, and the archive cannot be read: %2</source>
        <translation>Job %1 ist nicht im Cluster, und das Archiv kann nicht gelesen werden: %2</translation>
    </message>
    <message numerus="yes">
        <source>%n log(s)</source>
        <translation><numerusform>%n Log</numerusform><numerusform>%n Logs</numerusform></translation>
    </message>
    <message>
        <source>  not archived: %1</source>
        <translation>  nicht archiviert: %1</translation>
    </message>
    <message>
        <source>%1 (%2 ago)</source>
        <translation>%1 (vor %2)</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::StopCommand</name>
    <message>
        <source>lost the cluster while stopping job %1: %2</source>
        <translation>Verbindung zum Cluster beim Stoppen von Job %1 verloren: %2</translation>
    </message>
    <message>
        <source>job %1 has already ended: it is %2 (see `starforge-cli status %1`); there is nothing to stop</source>
        <translation>Job %1 ist bereits beendet: Sein Zustand ist %2 (siehe `starforge-cli status %1`); es gibt nichts zu stoppen</translation>
    </message>
    <message>
        <source>job %1 %2; its logs and events are in jobs/%1/</source>
        <translation>Job %1: %2; seine Logs und Ereignisse liegen unter jobs/%1/</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::StopPlaygroundCommand</name>
    <message>
        <source>usage: starforge-cli playground stop NAME</source>
        <translation>Verwendung: starforge-cli playground stop NAME</translation>
    </message>
    <message>
        <source>%1 stopped</source>
        <translation>%1 gestoppt</translation>
    </message>
</context>
<context>
    <name>Starforge::Cli::SubmitCommand</name>
    <message>
        <source>interrupted again; quitting without cleaning up</source>
        <translation>erneut unterbrochen; Beenden ohne Aufräumen</translation>
    </message>
    <message>
        <source>cancelling the submission (Ctrl-C again to quit at once)...</source>
        <translation>Einreichung wird abgebrochen (erneut Strg+C zum sofortigen Beenden)...</translation>
    </message>
    <message>
        <source>stopped waiting; the job goes on (see starforge-cli status)</source>
        <translation>Warten beendet; der Job läuft weiter (siehe starforge-cli status)</translation>
    </message>
    <message>
        <source>whether the job fits was not checked: the capacity is unknown</source>
        <translation>ob der Job passt, wurde nicht geprüft: Die Kapazität ist unbekannt</translation>
    </message>
    <message>
        <source>whether the job fits was not checked: %1</source>
        <translation>ob der Job passt, wurde nicht geprüft: %1</translation>
    </message>
    <message>
        <source>pool %1: %2</source>
        <translation>Pool %1: %2</translation>
    </message>
    <message>
        <source>the job can never run on this cluster as it is, so nothing was built or uploaded:
  %1
Change the pools (see starforge-cli capacity), or submit it anyway with --force: it then waits as Pending until the cluster has the nodes.</source>
        <translation>der Job kann in dieser Form nie auf diesem Cluster laufen, daher wurde nichts gebaut oder hochgeladen:
  %1
Ändern Sie die Pools (siehe starforge-cli capacity) oder reichen Sie ihn trotzdem mit --force ein: Er wartet dann als Pending, bis der Cluster die Knoten hat.</translation>
    </message>
    <message>
        <source>warning: it waits for busy GPUs: %1</source>
        <translation>Warnung: Der Job wartet auf belegte GPUs: %1</translation>
    </message>
    <message>
        <source>warning: %1</source>
        <translation>Warnung: %1</translation>
    </message>
    <message>
        <source>submitted job %1 (RayJob %2 in %3)</source>
        <translation>Job %1 eingereicht (RayJob %2 im Namespace %3)</translation>
    </message>
    <message>
        <source>%1, %2, already in the bucket</source>
        <translation>%1, %2, bereits im Bucket</translation>
    </message>
    <message>
        <source>%1, %2, %3 uploaded</source>
        <translation>%1, %2, %3 hochgeladen</translation>
    </message>
    <message>
        <source>its logs are archived to the bucket while the Starforge app or `starforge-cli jobs --follow` runs; without either, the cluster deletes the head and worker logs %1 after the job ends (FORGE_KUBERAY_TTL_SECONDS)</source>
        <translation>die Logs des Jobs werden im Bucket archiviert, solange die Starforge-App oder `starforge-cli jobs --follow` läuft; läuft keines von beiden, löscht der Cluster die Head- und Worker-Logs %1 nach Ende des Jobs (FORGE_KUBERAY_TTL_SECONDS)</translation>
    </message>
    <message>
        <source>lost the cluster while waiting for job %1: %2 The job may still run; see `starforge-cli status %1` once the cluster answers.</source>
        <translation>Verbindung zum Cluster beim Warten auf Job %1 verloren: %2 Der Job läuft möglicherweise noch; siehe `starforge-cli status %1`, sobald der Cluster antwortet.</translation>
    </message>
    <message>
        <source>%1: why %2: %3</source>
        <translation>%1: Ursache %2: %3</translation>
    </message>
    <message>
        <source>  not archived: %1</source>
        <translation>  nicht archiviert: %1</translation>
    </message>
    <message>
        <source>job %1 was deleted before it ended (starforge-cli delete); nothing was archived</source>
        <translation>Job %1 wurde vor seinem Ende gelöscht (starforge-cli delete); es wurde nichts archiviert</translation>
    </message>
</context>
<context>
    <name>Starforge::Config::EmbeddedSandbox</name>
    <message>
        <source>cannot read the sandbox connection file %1: %2</source>
        <translation>die Verbindungsdatei %1 der Sandbox kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <source>%1 is not a starforge-sandbox connection file (no "forge" values)</source>
        <translation>%1 ist keine Verbindungsdatei von starforge-sandbox (keine "forge"-Werte)</translation>
    </message>
    <message>
        <source>starforge-sandbox stopped (exit code %1) before it was ready: %2</source>
        <translation>starforge-sandbox wurde beendet (Exit-Code %1), bevor sie bereit war: %2</translation>
    </message>
    <message>
        <source>cannot start %1: %2 (build it with scripts/run.sh)</source>
        <translation>%1 kann nicht gestartet werden: %2 (bauen Sie es mit scripts/run.sh)</translation>
    </message>
    <message>
        <source>starforge-sandbox did not become ready within %1 s</source>
        <translation>starforge-sandbox wurde nicht innerhalb von %1 s bereit</translation>
    </message>
</context>
<context>
    <name>Starforge::Config::ProfileManager</name>
    <message>
        <source>%1
Nothing was changed.</source>
        <translation>%1
Es wurde nichts geändert.</translation>
    </message>
    <message>
        <source>there is no profile named '%1'</source>
        <translation>es gibt kein Profil namens '%1'</translation>
    </message>
    <message>
        <source>%1 Nothing was changed.</source>
        <translation>%1 Es wurde nichts geändert.</translation>
    </message>
    <message>
        <source>%1 The profile was not imported.</source>
        <translation>%1 Das Profil wurde nicht importiert.</translation>
    </message>
    <message>
        <source>%1 The profile was not duplicated.</source>
        <translation>%1 Das Profil wurde nicht dupliziert.</translation>
    </message>
    <message>
        <source>%1 The profile was not renamed.</source>
        <translation>%1 Das Profil wurde nicht umbenannt.</translation>
    </message>
    <message>
        <source>%1 The profile was kept so that its secrets are not orphaned; delete it with --force to leave them in the keychain.</source>
        <translation>%1 Das Profil wurde behalten, damit seine Geheimnisse nicht verwaist zurückbleiben; löschen Sie es mit --force, um sie im Schlüsselbund zu belassen.</translation>
    </message>
    <message>
        <source>the secrets of profile '%1' may remain in the keychain (service starforge); remove them with: secret-tool clear server starforge user %1/FORGE_K8S_TOKEN, and likewise for FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY</source>
        <translation>die Geheimnisse des Profils '%1' verbleiben möglicherweise im Schlüsselbund (Dienst starforge); entfernen Sie sie mit: secret-tool clear server starforge user %1/FORGE_K8S_TOKEN, ebenso für FORGE_S3_ACCESS_KEY und FORGE_S3_SECRET_KEY</translation>
    </message>
    <message>
        <source>%1 The settings file still holds secrets; they move into the keychain the next time it answers.</source>
        <translation>%1 Die Einstellungsdatei enthält noch Geheimnisse; sie werden in den Schlüsselbund verschoben, sobald dieser wieder antwortet.</translation>
    </message>
</context>
<context>
    <name>Starforge::ConnectionTest</name>
    <message>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <source>API server</source>
        <translation>API-Server</translation>
    </message>
    <message>
        <source>Signed in as</source>
        <translation>Angemeldet als</translation>
    </message>
    <message>
        <source>KubeRay operator</source>
        <translation>KubeRay-Operator</translation>
    </message>
    <message>
        <source>Object storage bucket</source>
        <translation>Objektspeicher-Bucket</translation>
    </message>
    <message>
        <source>The settings could not be read.</source>
        <translation>Die Einstellungen konnten nicht gelesen werden.</translation>
    </message>
    <message>
        <source>The credentials were refused: set a current token, client certificate or credential plugin under Sign-in.</source>
        <translation>Die Anmeldedaten wurden abgelehnt: Legen Sie im Bereich Anmeldung ein gültiges Token, ein Client-Zertifikat oder ein Anmelde-Plugin fest.</translation>
    </message>
    <message>
        <source>%1 of %2 checks passed</source>
        <translation>%1 von %2 Prüfungen bestanden</translation>
    </message>
    <message>
        <source>, %1 with a warning</source>
        <translation>, %1 mit Warnung</translation>
    </message>
    <message>
        <source>, %1 failed</source>
        <translation>, %1 fehlgeschlagen</translation>
    </message>
    <message>
        <source>, %1 not tried</source>
        <translation>, %1 nicht versucht</translation>
    </message>
    <message>
        <source>A setting is invalid.</source>
        <translation>Eine Einstellung ist ungültig.</translation>
    </message>
    <message>
        <source>The cluster's settings are incomplete.</source>
        <translation>Die Cluster-Einstellungen sind unvollständig.</translation>
    </message>
    <message>
        <source>Valid; namespace %1.</source>
        <translation>Gültig; Namespace %1.</translation>
    </message>
    <message>
        <source>reach the API server</source>
        <translation>den API-Server erreichen</translation>
    </message>
    <message>
        <source>%1 answered.</source>
        <translation>%1 hat geantwortet.</translation>
    </message>
    <message>
        <source>The credentials were refused.</source>
        <translation>Die Anmeldedaten wurden abgelehnt.</translation>
    </message>
    <message>
        <source>Check FORGE_K8S_API_SERVER, the CA settings under Network, and that this machine can reach %1.</source>
        <translation>Prüfen Sie FORGE_K8S_API_SERVER, die CA-Einstellungen unter Netzwerk und ob dieser Rechner %1 erreichen kann.</translation>
    </message>
    <message>
        <source>The API server did not answer.</source>
        <translation>Der API-Server hat nicht geantwortet.</translation>
    </message>
    <message>
        <source>Kubernetes %1 at %2.</source>
        <translation>Kubernetes %1 unter %2.</translation>
    </message>
    <message>
        <source>%1; your jobs are recorded as theirs.</source>
        <translation>%1; Ihre Jobs werden diesem Benutzer zugeordnet.</translation>
    </message>
    <message>
        <source>%1; your jobs are recorded as %2 (FORGE_OWNER).</source>
        <translation>%1; Ihre Jobs werden als %2 erfasst (FORGE_OWNER).</translation>
    </message>
    <message>
        <source>%1 (FORGE_OWNER); the cluster could not say more: %2</source>
        <translation>%1 (FORGE_OWNER); der Cluster konnte keine weiteren Angaben machen: %2</translation>
    </message>
    <message>
        <source>The cluster could not say who you are: %1</source>
        <translation>Der Cluster konnte nicht ermitteln, wer Sie sind: %1</translation>
    </message>
    <message>
        <source>Set FORGE_OWNER to the same name on every workstation you use, so your jobs stay yours.</source>
        <translation>Setzen Sie FORGE_OWNER auf jeder Workstation, die Sie verwenden, auf denselben Namen, damit Ihre Jobs Ihnen zugeordnet bleiben.</translation>
    </message>
    <message>
        <source>Allow get on customresourcedefinitions (apiextensions.k8s.io) at the cluster scope, or set the release with --kuberay-version in starforge-cli.</source>
        <translation>Erlauben Sie get auf customresourcedefinitions (apiextensions.k8s.io) clusterweit oder legen Sie die Version mit --kuberay-version in starforge-cli fest.</translation>
    </message>
    <message>
        <source>Ask the cluster's administrators to install KubeRay 1.4 or newer (1.7 is what Starforge is built against).</source>
        <translation>Bitten Sie die Administratoren des Clusters, KubeRay 1.4 oder neuer zu installieren (Starforge ist auf 1.7 ausgelegt).</translation>
    </message>
    <message>
        <source>Allowed in namespace %1.</source>
        <translation>Im Namespace %1 erlaubt.</translation>
    </message>
    <message>
        <source>Unavailable: the token cannot %1.</source>
        <translation>Nicht verfügbar: Dem Token fehlt die Berechtigung für: %1.</translation>
    </message>
    <message>
        <source>A cluster administrator can grant it with these Role rules:
%1</source>
        <translation>Ein Cluster-Administrator kann dies mit diesen Role-Regeln gewähren:
%1</translation>
    </message>
    <message>
        <source>Jobs ship their code and keep their history there; set the Object storage (S3) settings.</source>
        <translation>Jobs übertragen ihren Code dorthin und speichern dort ihren Verlauf; legen Sie die Einstellungen für den Objektspeicher (S3) fest.</translation>
    </message>
    <message>
        <source>%1 at %2</source>
        <translation>%1 unter %2</translation>
    </message>
    <message>
        <source>Check the Object storage (S3) settings: the endpoint, and the access and secret keys.</source>
        <translation>Prüfen Sie die Einstellungen für den Objektspeicher (S3): den Endpunkt sowie den Zugriffs- und den geheimen Schlüssel.</translation>
    </message>
    <message>
        <source>Bucket %1 can be read.</source>
        <translation>Bucket %1 ist lesbar.</translation>
    </message>
</context>
<context>
    <name>Starforge::Events::EventJournal</name>
    <message>
        <source>Cannot %1 the event journal %2: %3. Check that the folder can be written and the disk is not full.</source>
        <translation>Das Ereignisjournal %2 kann nicht %1 werden: %3. Prüfen Sie, ob der Ordner beschreibbar und die Festplatte nicht voll ist.</translation>
    </message>
    <message>
        <source>open</source>
        <translation>geöffnet</translation>
    </message>
    <message>
        <source>read</source>
        <translation>gelesen</translation>
    </message>
    <message>
        <source>The event journal %1 was written by a newer Starforge (schema version %2; this one knows up to %3). Use that Starforge, or move the file away to start a new journal.</source>
        <translation>Das Ereignisjournal %1 wurde von einer neueren Starforge-Version geschrieben (Schemaversion %2; diese Version kennt bis %3). Verwenden Sie die neuere Version oder verschieben Sie die Datei, um ein neues Journal zu beginnen.</translation>
    </message>
    <message>
        <source>check</source>
        <translation>geprüft</translation>
    </message>
    <message>
        <source>%1 is an SQLite database but not a Starforge event journal. Move it away, and Starforge starts a new journal there.</source>
        <translation>%1 ist eine SQLite-Datenbank, aber kein Starforge-Ereignisjournal. Verschieben Sie die Datei, dann legt Starforge dort ein neues Journal an.</translation>
    </message>
    <message>
        <source>write</source>
        <translation>geschrieben</translation>
    </message>
    <message>
        <source>set up</source>
        <translation>eingerichtet</translation>
    </message>
    <message>
        <source>The event journal needs a file name.</source>
        <translation>Das Ereignisjournal benötigt einen Dateinamen.</translation>
    </message>
    <message>
        <source>The event journal's size bound (%1 bytes) is too small: give it at least %2 bytes.</source>
        <translation>Die Größengrenze des Ereignisjournals (%1 Bytes) ist zu klein: Geben Sie mindestens %2 Bytes an.</translation>
    </message>
    <message>
        <source>The event journal must keep events for at least a day (maxAgeDays is %1).</source>
        <translation>Das Ereignisjournal muss Ereignisse mindestens einen Tag lang aufbewahren (maxAgeDays ist %1).</translation>
    </message>
    <message>
        <source>Qt's SQLite driver (QSQLITE) is not installed: install the package libqt6sql6-sqlite.</source>
        <translation>Der SQLite-Treiber von Qt (QSQLITE) ist nicht installiert: Installieren Sie das Paket libqt6sql6-sqlite.</translation>
    </message>
    <message>
        <source>Cannot create the folder %1 for the event journal: check its permissions and that the disk is not full.</source>
        <translation>Der Ordner %1 für das Ereignisjournal kann nicht angelegt werden: Prüfen Sie seine Berechtigungen und ob die Festplatte voll ist.</translation>
    </message>
    <message>
        <source>The event journal %1 cannot be written: give your user write permission on it%2.</source>
        <translation>Das Ereignisjournal %1 kann nicht geschrieben werden: Geben Sie Ihrem Benutzer Schreibrechte darauf%2.</translation>
    </message>
    <message>
        <source> and its folder</source>
        <translation> und auf seinen Ordner</translation>
    </message>
    <message>
        <source>Cannot create the event journal %1: %2.</source>
        <translation>Das Ereignisjournal %1 kann nicht angelegt werden: %2.</translation>
    </message>
    <message>
        <source>The event journal %1 is damaged and could not be moved aside: move or delete it, and Starforge starts a new one.</source>
        <translation>Das Ereignisjournal %1 ist beschädigt und konnte nicht beiseitegeschoben werden: Verschieben oder löschen Sie es, dann beginnt Starforge ein neues.</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::CapacityHeatmapView</name>
    <message>
        <source>GPU capacity heatmap</source>
        <translation>GPU-Kapazitäts-Heatmap</translation>
    </message>
    <message>
        <source>One cell per node, one band per GPU series; colour is GPUs in use over allocatable. Arrow keys move between nodes, Enter lists the node's pods, + and - zoom.</source>
        <translation>Eine Zelle pro Knoten, ein Band pro GPU-Serie; die Farbe zeigt belegte im Verhältnis zu zuweisbaren GPUs. Mit den Pfeiltasten wechseln Sie zwischen Knoten, Enter listet die Pods des Knotens auf, + und - zoomen.</translation>
    </message>
    <message>
        <source>%1 · 1 node</source>
        <translation>%1 · 1 Knoten</translation>
    </message>
    <message>
        <source>%1 · %2 nodes</source>
        <translation>%1 · %2 Knoten</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::CapacityLegend</name>
    <message>
        <source>Heatmap legend</source>
        <translation>Legende der Heatmap</translation>
    </message>
    <message>
        <source>Colour is GPUs in use over allocatable, from dark violet (none in use) through teal and green to yellow (all in use). Hatched cells are blocked nodes: cordoned, not ready, or tainted. Grey cells are nodes without GPUs.</source>
        <translation>Die Farbe zeigt belegte im Verhältnis zu zuweisbaren GPUs, von Dunkelviolett (keine belegt) über Türkis und Grün bis Gelb (alle belegt). Schraffierte Zellen sind blockierte Knoten: abgesperrt, nicht bereit oder mit Taint. Graue Zellen sind Knoten ohne GPUs.</translation>
    </message>
    <message>
        <source>GPUs in use</source>
        <translation>Belegte GPUs</translation>
    </message>
    <message>
        <source>blocked</source>
        <translation>blockiert</translation>
    </message>
    <message>
        <source>no GPUs</source>
        <translation>keine GPUs</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::CapacityPanel</name>
    <message>
        <source>&amp;Series:</source>
        <translation>&amp;Serie:</translation>
    </message>
    <message>
        <source>Series shown</source>
        <translation>Angezeigte Serie</translation>
    </message>
    <message>
        <source>Show every GPU series or one</source>
        <translation>Alle GPU-Serien oder eine einzelne anzeigen</translation>
    </message>
    <message>
        <source>All series</source>
        <translation>Alle Serien</translation>
    </message>
    <message>
        <source>Zoom out</source>
        <translation>Verkleinern</translation>
    </message>
    <message>
        <source>Smaller cells (- or Ctrl+wheel down)</source>
        <translation>Kleinere Zellen (- oder Strg+Mausrad nach unten)</translation>
    </message>
    <message>
        <source>Zoom in</source>
        <translation>Vergrößern</translation>
    </message>
    <message>
        <source>Larger cells (+ or Ctrl+wheel up)</source>
        <translation>Größere Zellen (+ oder Strg+Mausrad nach oben)</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>Einpassen</translation>
    </message>
    <message>
        <source>Fit all nodes</source>
        <translation>Alle Knoten einpassen</translation>
    </message>
    <message>
        <source>The largest cells at which every node shows</source>
        <translation>Die größten Zellen, bei denen alle Knoten sichtbar sind</translation>
    </message>
    <message>
        <source>GPU series totals</source>
        <translation>Summen je GPU-Serie</translation>
    </message>
    <message>
        <source>Click a node, or press Enter on it, to list its pods.</source>
        <translation>Klicken Sie auf einen Knoten oder drücken Sie darauf Enter, um seine Pods aufzulisten.</translation>
    </message>
    <message>
        <source>Pods on the selected node</source>
        <translation>Pods auf dem ausgewählten Knoten</translation>
    </message>
    <message>
        <source>The capacity heatmap appears once the window is connected to a cluster.</source>
        <translation>Die Kapazitäts-Heatmap erscheint, sobald das Fenster mit einem Cluster verbunden ist.</translation>
    </message>
    <message>
        <source>The capacity heatmap is off for this connection: %1</source>
        <translation>Die Kapazitäts-Heatmap ist für diese Verbindung deaktiviert: %1</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>Verbindung wird hergestellt…</translation>
    </message>
    <message>
        <source>Node %1 is no longer in the cluster.</source>
        <translation>Der Knoten %1 ist nicht mehr im Cluster.</translation>
    </message>
    <message>
        <source>Pods on %1: %2 of %3 GPUs in use</source>
        <translation>Pods auf %1: %2 von %3 GPUs belegt</translation>
    </message>
    <message>
        <source>; blocked: %1</source>
        <translation>; blockiert: %1</translation>
    </message>
    <message>
        <source>No pods</source>
        <translation>Keine Pods</translation>
    </message>
    <message>
        <source>%1 px cells</source>
        <translation>Zellen mit %1 px</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ChatPane</name>
    <message>
        <source>Model to chat with</source>
        <translation>Modell für den Chat</translation>
    </message>
    <message>
        <source>The playground pod this conversation talks to</source>
        <translation>Der Playground-Pod, mit dem diese Unterhaltung geführt wird</translation>
    </message>
    <message>
        <source>Chat status</source>
        <translation>Chat-Status</translation>
    </message>
    <message>
        <source>vLLM metrics</source>
        <translation>vLLM-Metriken</translation>
    </message>
    <message>
        <source>&amp;Model:</source>
        <translation>&amp;Modell:</translation>
    </message>
    <message>
        <source>Not connected to a cluster.</source>
        <translation>Nicht mit einem Cluster verbunden.</translation>
    </message>
    <message>
        <source>Launch a model above, or choose one, to chat with it.</source>
        <translation>Starten Sie oben ein Modell oder wählen Sie eines aus, um damit zu chatten.</translation>
    </message>
    <message>
        <source>The pod %1 is gone; choose another model.</source>
        <translation>Der Pod %1 existiert nicht mehr; wählen Sie ein anderes Modell.</translation>
    </message>
    <message>
        <source>The pod %1 has ended (%2); launch it again to chat.</source>
        <translation>Der Pod %1 wurde beendet (%2); starten Sie ihn erneut, um zu chatten.</translation>
    </message>
    <message>
        <source>%1 is not ready yet (%2); the model loads before it answers.</source>
        <translation>%1 ist noch nicht bereit (%2); das Modell wird geladen, bevor es antwortet.</translation>
    </message>
    <message>
        <source>The conversation could not be saved: %1</source>
        <translation>Die Unterhaltung konnte nicht gespeichert werden: %1</translation>
    </message>
    <message>
        <source>no conversation store</source>
        <translation>kein Speicher für Unterhaltungen</translation>
    </message>
    <message>
        <source>Reopened. Its pod %1 is gone: choose a model to continue the conversation with.</source>
        <translation>Wieder geöffnet. Der zugehörige Pod %1 existiert nicht mehr: Wählen Sie ein Modell, mit dem die Unterhaltung fortgesetzt werden soll.</translation>
    </message>
    <message>
        <source>read %1's metrics</source>
        <translation>Metriken von %1 lesen</translation>
    </message>
    <message>
        <source>Metrics: %1</source>
        <translation>Metriken: %1</translation>
    </message>
    <message>
        <source>Metrics: the pod's /metrics has no vLLM series.</source>
        <translation>Metriken: /metrics des Pods enthält keine vLLM-Serien.</translation>
    </message>
    <message>
        <source>%1 running · %2 waiting · KV cache %3% · %4 tokens generated</source>
        <translation>%1 laufend · %2 wartend · KV-Cache %3% · %4 Tokens erzeugt</translation>
    </message>
    <message>
        <source> · mean first token %1 ms</source>
        <translation> · mittlere Zeit bis zum ersten Token %1 ms</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::CodePage</name>
    <message>
        <source>Br&amp;owse…</source>
        <translation>&amp;Durchsuchen…</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>Code</translation>
    </message>
    <message>
        <source>The folder that becomes the job's Capsule, and the job's name.</source>
        <translation>Der Ordner, der zur Capsule des Jobs wird, und der Name des Jobs.</translation>
    </message>
    <message>
        <source>Code folder</source>
        <translation>Code-Ordner</translation>
    </message>
    <message>
        <source>Browse for the code folder</source>
        <translation>Code-Ordner auswählen</translation>
    </message>
    <message>
        <source>Job name</source>
        <translation>Job-Name</translation>
    </message>
    <message>
        <source>Exclude patterns</source>
        <translation>Ausschlussmuster</translation>
    </message>
    <message>
        <source>gitignore patterns, separated by spaces, e.g. data/raw/ *.ipynb</source>
        <translation>gitignore-Muster, durch Leerzeichen getrennt, z. B. data/raw/ *.ipynb</translation>
    </message>
    <message>
        <source>Files of the code folder</source>
        <translation>Dateien des Code-Ordners</translation>
    </message>
    <message>
        <source>Capsule estimate</source>
        <translation>Capsule-Schätzung</translation>
    </message>
    <message>
        <source>Code &amp;folder:</source>
        <translation>Code-&amp;Ordner:</translation>
    </message>
    <message>
        <source>Job na&amp;me:</source>
        <translation>Job-Na&amp;me:</translation>
    </message>
    <message>
        <source>E&amp;xcludes:</source>
        <translation>Aus&amp;schlüsse:</translation>
    </message>
    <message>
        <source>File&amp;s (greyed: left out of the Capsule, with the pattern that drops them):</source>
        <translation>&amp;Dateien (ausgegraut: nicht in der Capsule, mit dem Muster, das sie ausschließt):</translation>
    </message>
    <message>
        <source>Capsule: %1 files, about %2 before compression (code, jobspec.json, manifest.json and runner.pex); %3 left out.</source>
        <translation>Capsule: %1 Dateien, etwa %2 vor der Komprimierung (Code, jobspec.json, manifest.json und runner.pex); %3 ausgelassen.</translation>
    </message>
    <message>
        <source>code: choose the folder with your training code (Browse…).</source>
        <translation>Code: Wählen Sie den Ordner mit Ihrem Trainingscode (Durchsuchen…).</translation>
    </message>
    <message>
        <source>code: the folder %1 does not exist; choose the folder with your training code.</source>
        <translation>Code: Der Ordner %1 existiert nicht; wählen Sie den Ordner mit Ihrem Trainingscode.</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ComparePlot</name>
    <message>
        <source>Runs compared</source>
        <translation>Verglichene Läufe</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>No runs.</source>
        <translation>Keine Läufe.</translation>
    </message>
    <message>
        <source>the step</source>
        <translation>dem Schritt</translation>
    </message>
    <message>
        <source>the wall time</source>
        <translation>der Echtzeit</translation>
    </message>
    <message>
        <source>%1 has no %2</source>
        <translation>%1 hat keine Daten für %2</translation>
    </message>
    <message>
        <source>%1 ends at %2 after %3 points</source>
        <translation>%1 endet bei %2 nach %3 Punkten</translation>
    </message>
    <message>
        <source>%1 against %2%3: %4.</source>
        <translation>%1 über %2%3: %4.</translation>
    </message>
    <message>
        <source> (log scale)</source>
        <translation> (logarithmische Skala)</translation>
    </message>
    <message>
        <source> At the cursor: %1.</source>
        <translation> Am Cursor: %1.</translation>
    </message>
    <message>
        <source>step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <source>wall time (s)</source>
        <translation>Echtzeit (s)</translation>
    </message>
    <message>
        <source>at %1: %2</source>
        <translation>bei %1: %2</translation>
    </message>
    <message>
        <source>%1 points of zero or below left out on the log scale</source>
        <translation>%1 Punkte mit Wert null oder kleiner auf der logarithmischen Skala ausgelassen</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::CompareWindow</name>
    <message>
        <source>&amp;Log scale</source>
        <translation>&amp;Logarithmische Skala</translation>
    </message>
    <message numerus="yes">
        <source>Compare %n run(s)</source>
        <translation>
            <numerusform>%n Lauf vergleichen</numerusform>
            <numerusform>%n Läufe vergleichen</numerusform>
        </translation>
    </message>
    <message>
        <source>Metric</source>
        <translation>Metrik</translation>
    </message>
    <message>
        <source>Against</source>
        <translation>X-Achse</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <source>Wall time</source>
        <translation>Echtzeit</translation>
    </message>
    <message>
        <source>Comparison status</source>
        <translation>Vergleichsstatus</translation>
    </message>
    <message>
        <source>Export &amp;CSV…</source>
        <translation>&amp;CSV exportieren…</translation>
    </message>
    <message>
        <source>Export &amp;PNG…</source>
        <translation>&amp;PNG exportieren…</translation>
    </message>
    <message>
        <source>&amp;Metric:</source>
        <translation>&amp;Metrik:</translation>
    </message>
    <message>
        <source>&amp;Against:</source>
        <translation>&amp;X-Achse:</translation>
    </message>
    <message>
        <source>Export the runs as CSV</source>
        <translation>Läufe als CSV exportieren</translation>
    </message>
    <message>
        <source>CSV (*.csv)</source>
        <translation>CSV (*.csv)</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>Exportieren</translation>
    </message>
    <message>
        <source>Could not write %1.</source>
        <translation>%1 konnte nicht geschrieben werden.</translation>
    </message>
    <message>
        <source>Export the plot as PNG</source>
        <translation>Diagramm als PNG exportieren</translation>
    </message>
    <message>
        <source>PNG (*.png)</source>
        <translation>PNG (*.png)</translation>
    </message>
    <message>
        <source>%1 has printed no progress yet</source>
        <translation>%1 hat noch keinen Fortschritt ausgegeben</translation>
    </message>
    <message>
        <source>%1: no bucket to read its archived log from</source>
        <translation>%1: kein Bucket, aus dem das archivierte Log gelesen werden kann</translation>
    </message>
    <message>
        <source>%1's archived driver log has no progress lines</source>
        <translation>Das archivierte Treiber-Log von %1 enthält keine Fortschrittszeilen</translation>
    </message>
    <message numerus="yes">
        <source>Reading %n archived driver log(s)…</source>
        <translation>
            <numerusform>%n archiviertes Treiber-Log wird gelesen…</numerusform>
            <numerusform>%n archivierte Treiber-Logs werden gelesen…</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ConnectionTestDialog</name>
    <message>
        <source>checking…</source>
        <translation>wird geprüft…</translation>
    </message>
    <message>
        <source>OK</source>
        <translation>OK</translation>
    </message>
    <message>
        <source>Warning</source>
        <translation>Warnung</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>Fehlgeschlagen</translation>
    </message>
    <message>
        <source>Not tried</source>
        <translation>Nicht versucht</translation>
    </message>
    <message>
        <source>&amp;Run again</source>
        <translation>&amp;Erneut ausführen</translation>
    </message>
    <message>
        <source>&amp;Copy report</source>
        <translation>Bericht &amp;kopieren</translation>
    </message>
    <message>
        <source>Test Connection</source>
        <translation>Verbindung testen</translation>
    </message>
    <message>
        <source>Connection checks</source>
        <translation>Verbindungsprüfungen</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>Prüfung</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>Ergebnis</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>Zeit</translation>
    </message>
    <message>
        <source>Detail</source>
        <translation>Details</translation>
    </message>
    <message>
        <source>Selected check's detail</source>
        <translation>Details der ausgewählten Prüfung</translation>
    </message>
    <message>
        <source>Testing %1…</source>
        <translation>%1 wird getestet…</translation>
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
        <translation>%1 funktioniert.</translation>
    </message>
    <message>
        <source>%1 has a problem; select a part to see what to change.</source>
        <translation>%1 hat ein Problem; wählen Sie einen Teil aus, um zu sehen, was zu ändern ist.</translation>
    </message>
    <message>
        <source>Starforge connection test of %1: %2</source>
        <translation>Starforge-Verbindungstest von %1: %2</translation>
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
        <translation>Öffnen</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::EventsPanel</name>
    <message>
        <source>Select a job in the Jobs panel to see its events on a timeline here: what each of its objects went through, and why it waits.</source>
        <translation>Wählen Sie im Bereich Jobs einen Job aus, um seine Ereignisse hier auf einer Zeitleiste zu sehen: was jedes seiner Objekte durchlaufen hat und warum er wartet.</translation>
    </message>
    <message>
        <source>Job on the timeline</source>
        <translation>Job auf der Zeitleiste</translation>
    </message>
    <message>
        <source>Why the job is pending</source>
        <translation>Warum der Job wartet</translation>
    </message>
    <message>
        <source>Filter events (reason, object, message)…</source>
        <translation>Ereignisse filtern (Grund, Objekt, Meldung)…</translation>
    </message>
    <message>
        <source>Filter events</source>
        <translation>Ereignisse filtern</translation>
    </message>
    <message>
        <source>Zoom in (+)</source>
        <translation>Vergrößern (+)</translation>
    </message>
    <message>
        <source>Zoom out (-)</source>
        <translation>Verkleinern (-)</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>Einpassen</translation>
    </message>
    <message>
        <source>Fit the whole job (0)</source>
        <translation>Ganzen Job einpassen (0)</translation>
    </message>
    <message>
        <source>Events of the selected job</source>
        <translation>Ereignisse des ausgewählten Jobs</translation>
    </message>
    <message numerus="yes">
        <source>%1 — %2, %n event(s)</source>
        <translation>
            <numerusform>%1 — %2, %n Ereignis</numerusform>
            <numerusform>%1 — %2, %n Ereignisse</numerusform>
        </translation>
    </message>
    <message>
        <source>Why it is pending — %1: %2</source>
        <translation>Warum er wartet — %1: %2</translation>
    </message>
    <message>
        <source>Why the job failed</source>
        <translation>Warum der Job fehlgeschlagen ist</translation>
    </message>
    <message>
        <source>Why it failed — %1: %2</source>
        <translation>Warum er fehlgeschlagen ist — %1: %2</translation>
    </message>
    <message numerus="yes">
        <source>Show the evidence (%n event(s))</source>
        <translation>
            <numerusform>Belege anzeigen (%n Ereignis)</numerusform>
            <numerusform>Belege anzeigen (%n Ereignisse)</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::FirstRunPanel</name>
    <message>
        <source>&amp;Import from kubeconfig</source>
        <translation>Aus kubeconfig &amp;importieren</translation>
    </message>
    <message>
        <source>Use a context you already have with kubectl: its server, certificates and credentials.</source>
        <translation>Verwenden Sie einen Kontext, den Sie bereits mit kubectl nutzen: seinen Server, seine Zertifikate und Anmeldedaten.</translation>
    </message>
    <message>
        <source>&amp;Enter a server</source>
        <translation>&amp;Server eingeben</translation>
    </message>
    <message>
        <source>Type the API server's URL and paste a token.</source>
        <translation>Geben Sie die URL des API-Servers ein und fügen Sie ein Token ein.</translation>
    </message>
    <message>
        <source>&amp;Try the sandbox</source>
        <translation>&amp;Sandbox ausprobieren</translation>
    </message>
    <message>
        <source>A small cluster on this machine with GPU nodes, KubeRay and a bucket, to try everything first. It stops when the app quits.</source>
        <translation>Ein kleiner Cluster auf diesem Rechner mit GPU-Knoten, KubeRay und einem Bucket, um zunächst alles auszuprobieren. Er wird beendet, wenn die App beendet wird.</translation>
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
        <translation>Log-Verzeichnis von NeMo-RL: %1</translation>
    </message>
    <message>
        <source>&amp;Chat with this checkpoint</source>
        <translation>Mit diesem Checkpoint &amp;chatten</translation>
    </message>
    <message>
        <source>Select a job in the Jobs panel to see its spec, status, pods and training progress here.</source>
        <translation>Wählen Sie im Bereich Jobs einen Job aus, um hier seine Spezifikation, seinen Status, seine Pods und den Trainingsfortschritt zu sehen.</translation>
    </message>
    <message>
        <source>Selected job</source>
        <translation>Ausgewählter Job</translation>
    </message>
    <message>
        <source>Why the job is pending</source>
        <translation>Warum der Job wartet</translation>
    </message>
    <message>
        <source>Job spec and status</source>
        <translation>Job-Spezifikation und Status</translation>
    </message>
    <message>
        <source>Pods of the selected job</source>
        <translation>Pods des ausgewählten Jobs</translation>
    </message>
    <message>
        <source>Metric to plot</source>
        <translation>Darzustellende Metrik</translation>
    </message>
    <message>
        <source>The training metric the plot shows (from the runner's progress lines)</source>
        <translation>Die Trainingsmetrik, die das Diagramm zeigt (aus den Fortschrittszeilen des Runners)</translation>
    </message>
    <message>
        <source>&amp;Metric:</source>
        <translation>&amp;Metrik:</translation>
    </message>
    <message>
        <source>Training progress</source>
        <translation>Trainingsfortschritt</translation>
    </message>
    <message>
        <source>Finished checkpoints</source>
        <translation>Fertige Checkpoints</translation>
    </message>
    <message>
        <source>Each finished step: whether vLLM can serve it as it is, or which NeMo-RL converter it needs</source>
        <translation>Jeder fertige Schritt: ob vLLM ihn direkt bereitstellen kann oder welchen NeMo-RL-Konverter er benötigt</translation>
    </message>
    <message>
        <source>Copy path</source>
        <translation>Pfad kopieren</translation>
    </message>
    <message>
        <source>Serve the selected checkpoint with vLLM in the playground and chat with it</source>
        <translation>Den ausgewählten Checkpoint mit vLLM im Playground bereitstellen und mit ihm chatten</translation>
    </message>
    <message>
        <source>Why it is pending — %1: %2</source>
        <translation>Warum er wartet — %1: %2</translation>
    </message>
    <message>
        <source>Why it failed — %1: %2</source>
        <translation>Warum er fehlgeschlagen ist — %1: %2</translation>
    </message>
    <message>
        <source>Why the job failed</source>
        <translation>Warum der Job fehlgeschlagen ist</translation>
    </message>
    <message>
        <source>Job id</source>
        <translation>Job-ID</translation>
    </message>
    <message>
        <source>Owner</source>
        <translation>Besitzer</translation>
    </message>
    <message>
        <source>Submitted</source>
        <translation>Eingereicht</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>Gestartet</translation>
    </message>
    <message>
        <source>not yet</source>
        <translation>noch nicht</translation>
    </message>
    <message>
        <source>Ended</source>
        <translation>Beendet</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Grund</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Meldung</translation>
    </message>
    <message>
        <source>Spec</source>
        <translation>Spezifikation</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Recipe</source>
        <translation>Rezept</translation>
    </message>
    <message>
        <source>Config</source>
        <translation>Konfiguration</translation>
    </message>
    <message>
        <source>Overrides</source>
        <translation>Überschreibungen</translation>
    </message>
    <message>
        <source>Pools</source>
        <translation>Pools</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>Image</translation>
    </message>
    <message>
        <source>Secret %1</source>
        <translation>Secret %1</translation>
    </message>
    <message>
        <source>Env</source>
        <translation>Umgebung</translation>
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
        <translation>Deployment</translation>
    </message>
    <message>
        <source>(not set yet)</source>
        <translation>(noch nicht gesetzt)</translation>
    </message>
    <message>
        <source>Ray job</source>
        <translation>Ray-Job</translation>
    </message>
    <message>
        <source>(not submitted yet)</source>
        <translation>(noch nicht eingereicht)</translation>
    </message>
    <message>
        <source>Status since</source>
        <translation>Status seit</translation>
    </message>
    <message>
        <source>Dashboard</source>
        <translation>Dashboard</translation>
    </message>
    <message>
        <source>Failed attempts</source>
        <translation>Fehlgeschlagene Versuche</translation>
    </message>
    <message>
        <source>RayCluster %1</source>
        <translation>RayCluster %1</translation>
    </message>
    <message>
        <source>State</source>
        <translation>Zustand</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>startet</translation>
    </message>
    <message>
        <source>Workers ready</source>
        <translation>Bereite Worker</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>%1 von %2</translation>
    </message>
    <message>
        <source>Head pod</source>
        <translation>Head-Pod</translation>
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
        <translation>entfernt (sein letzter Zustand steht in objects.json)</translation>
    </message>
    <message>
        <source>Archive</source>
        <translation>Archiv</translation>
    </message>
    <message>
        <source>Archived</source>
        <translation>Archiviert</translation>
    </message>
    <message>
        <source>%1, under jobs/%2/ in the bucket</source>
        <translation>%1, unter jobs/%2/ im Bucket</translation>
    </message>
    <message>
        <source>%1: %2/%3 (%4)</source>
        <translation>%1: %2/%3 (%4)</translation>
    </message>
    <message>
        <source>Logs</source>
        <translation>Logs</translation>
    </message>
    <message>
        <source>Not archived</source>
        <translation>Nicht archiviert</translation>
    </message>
    <message>
        <source>No progress yet: it is read from the driver's log while the job runs.</source>
        <translation>Noch kein Fortschritt: Er wird während der Laufzeit des Jobs aus dem Log des Treibers gelesen.</translation>
    </message>
    <message>
        <source>The driver has not reported a step yet.</source>
        <translation>Der Treiber hat noch keinen Schritt gemeldet.</translation>
    </message>
    <message>
        <source>&amp;Chat with step %1</source>
        <translation>Mit Schritt %1 &amp;chatten</translation>
    </message>
    <message>
        <source>Chat with the checkpoint of step %1 in the playground</source>
        <translation>Im Playground mit dem Checkpoint von Schritt %1 chatten</translation>
    </message>
    <message>
        <source>Chat with this checkpoint</source>
        <translation>Mit diesem Checkpoint chatten</translation>
    </message>
    <message>
        <source>The archive has no driver log to read progress from.</source>
        <translation>Das Archiv enthält kein Treiber-Log, aus dem der Fortschritt gelesen werden kann.</translation>
    </message>
    <message>
        <source>The driver's log reports no training steps.</source>
        <translation>Das Log des Treibers meldet keine Trainingsschritte.</translation>
    </message>
    <message>
        <source>Final: %1</source>
        <translation>Endwert: %1</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::JobsPanel</name>
    <message>
        <source>&amp;Stop</source>
        <translation>&amp;Stoppen</translation>
    </message>
    <message>
        <source>&amp;Refresh history</source>
        <translation>&amp;Verlauf aktualisieren</translation>
    </message>
    <message>
        <source>&amp;Details</source>
        <translation>&amp;Details</translation>
    </message>
    <message>
        <source>&amp;Copy job id</source>
        <translation>Job-ID &amp;kopieren</translation>
    </message>
    <message>
        <source>D&amp;elete…</source>
        <translation>&amp;Löschen…</translation>
    </message>
    <message>
        <source>Res&amp;ubmit…</source>
        <translation>E&amp;rneut einreichen…</translation>
    </message>
    <message>
        <source>Copy Ray&amp;Job</source>
        <translation>Ray&amp;Job kopieren</translation>
    </message>
    <message>
        <source>Open e&amp;vents</source>
        <translation>&amp;Ereignisse öffnen</translation>
    </message>
    <message>
        <source>Open &amp;logs</source>
        <translation>L&amp;ogs öffnen</translation>
    </message>
    <message>
        <source>Co&amp;mpare runs…</source>
        <translation>Läufe ver&amp;gleichen…</translation>
    </message>
    <message>
        <source>Stop the selected job: its logs and events are archived, then its RayJob is deleted</source>
        <translation>Ausgewählten Job stoppen: Seine Logs und Ereignisse werden archiviert, dann wird sein RayJob gelöscht</translation>
    </message>
    <message>
        <source>Read the job history from the bucket again</source>
        <translation>Job-Verlauf erneut aus dem Bucket lesen</translation>
    </message>
    <message>
        <source>Show the selected job in the Job dock: spec, status, pods and training progress</source>
        <translation>Ausgewählten Job im Bereich Job anzeigen: Spezifikation, Status, Pods und Trainingsfortschritt</translation>
    </message>
    <message>
        <source>Open the submission wizard with this job's JobSpec</source>
        <translation>Den Einreichungsassistenten mit der JobSpec dieses Jobs öffnen</translation>
    </message>
    <message>
        <source>Copy the job's RayJob as JSON: the cluster's, else the archived one</source>
        <translation>Den RayJob des Jobs als JSON kopieren: den aus dem Cluster, sonst den archivierten</translation>
    </message>
    <message>
        <source>See the selected job's events on a timeline in the Events dock</source>
        <translation>Ereignisse des ausgewählten Jobs auf einer Zeitleiste im Bereich Ereignisse ansehen</translation>
    </message>
    <message>
        <source>Read the selected job's logs in the Logs dock</source>
        <translation>Logs des ausgewählten Jobs im Bereich Logs lesen</translation>
    </message>
    <message>
        <source>More job actions</source>
        <translation>Weitere Job-Aktionen</translation>
    </message>
    <message>
        <source>Filter by id, name or message</source>
        <translation>Nach ID, Name oder Meldung filtern</translation>
    </message>
    <message>
        <source>Filter jobs</source>
        <translation>Jobs filtern</translation>
    </message>
    <message>
        <source>All</source>
        <translation>Alle</translation>
    </message>
    <message>
        <source>Active</source>
        <translation>Aktiv</translation>
    </message>
    <message>
        <source>Ended</source>
        <translation>Beendet</translation>
    </message>
    <message>
        <source>Active: submitting, pending or running. Ended: succeeded, failed or stopped, archived or being archived.</source>
        <translation>Aktiv: wird eingereicht, wartend oder laufend. Beendet: erfolgreich, fehlgeschlagen oder gestoppt, archiviert oder in Archivierung.</translation>
    </message>
    <message>
        <source>Jobs</source>
        <translation>Jobs</translation>
    </message>
    <message>
        <source>Archived (Succeeded)</source>
        <translation>Archived (Succeeded)</translation>
    </message>
    <message>
        <source>Show:</source>
        <translation>Anzeigen:</translation>
    </message>
    <message>
        <source>Jobs shown</source>
        <translation>Angezeigte Jobs</translation>
    </message>
    <message>
        <source>Overlay the selected jobs' training metrics on one plot (select several with Ctrl or Shift)</source>
        <translation>Die Trainingsmetriken der ausgewählten Jobs in einem Diagramm überlagern (mehrere mit Strg oder Umschalt auswählen)</translation>
    </message>
    <message>
        <source>Job history: %1</source>
        <translation>Job-Verlauf: %1</translation>
    </message>
    <message>
        <source>Archived job records that could not be read: %1</source>
        <translation>Archivierte Job-Einträge, die nicht gelesen werden konnten: %1</translation>
    </message>
    <message>
        <source>Jobs appear here once the window is connected to a cluster.</source>
        <translation>Jobs erscheinen hier, sobald das Fenster mit einem Cluster verbunden ist.</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>Verbindung wird hergestellt…</translation>
    </message>
    <message>
        <source>Reconnecting…</source>
        <translation>Verbindung wird wiederhergestellt…</translation>
    </message>
    <message>
        <source>Jobs appear here once the window is connected to a cluster (the status bar says why it is not).</source>
        <translation>Jobs erscheinen hier, sobald das Fenster mit einem Cluster verbunden ist (die Statusleiste zeigt, warum es nicht verbunden ist).</translation>
    </message>
    <message>
        <source>Job tracking and history need the profile's object storage. Set FORGE_S3_ENDPOINT, FORGE_S3_BUCKET, FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY in File › Connection Profiles (the keys are kept in the keychain), or in the environment.

%1</source>
        <translation>Job-Verfolgung und -Verlauf benötigen den Objektspeicher des Profils. Setzen Sie FORGE_S3_ENDPOINT, FORGE_S3_BUCKET, FORGE_S3_ACCESS_KEY und FORGE_S3_SECRET_KEY unter Datei › Verbindungsprofile (die Schlüssel werden im Schlüsselbund gespeichert) oder in der Umgebung.

%1</translation>
    </message>
    <message>
        <source>Could not archive job %1 (its RayJob is kept; trying again later): %2</source>
        <translation>Job %1 konnte nicht archiviert werden (sein RayJob bleibt erhalten; neuer Versuch später): %2</translation>
    </message>
    <message>
        <source>Delete the selected job for good: its RayJob, its logs and events in the bucket (Delete)</source>
        <translation>Ausgewählten Job endgültig löschen: seinen RayJob sowie seine Logs und Ereignisse im Bucket (Entf)</translation>
    </message>
    <message>
        <source>Reading the job history…</source>
        <translation>Job-Verlauf wird gelesen…</translation>
    </message>
    <message>
        <source>No jobs yet: File › New Job (Ctrl+N) submits one, as does starforge-cli submit SPEC</source>
        <translation>Noch keine Jobs: Datei › Neuer Job (Strg+N) reicht einen ein, ebenso starforge-cli submit SPEC</translation>
    </message>
    <message>
        <source>1 job</source>
        <translation>1 Job</translation>
    </message>
    <message>
        <source>%1 jobs</source>
        <translation>%1 Jobs</translation>
    </message>
    <message>
        <source>: %1 active, %2 ended</source>
        <translation>: %1 aktiv, %2 beendet</translation>
    </message>
    <message>
        <source>%1 shown</source>
        <translation>%1 angezeigt</translation>
    </message>
    <message>
        <source>reading the history…</source>
        <translation>Verlauf wird gelesen…</translation>
    </message>
    <message>
        <source>not following live jobs</source>
        <translation>aktive Jobs werden nicht verfolgt</translation>
    </message>
    <message>
        <source>Stop job</source>
        <translation>Job stoppen</translation>
    </message>
    <message>
        <source>Stop job %1 (%2)?

Its logs and events are archived to the bucket first; then its RayJob is deleted and Ray stops the job. This cannot be undone.</source>
        <translation>Job %1 (%2) stoppen?

Seine Logs und Ereignisse werden zuerst im Bucket archiviert; dann wird sein RayJob gelöscht und Ray stoppt den Job. Dies kann nicht rückgängig gemacht werden.</translation>
    </message>
    <message>
        <source>Stopping job %1: archiving its logs and events…</source>
        <translation>Job %1 wird gestoppt: Logs und Ereignisse werden archiviert…</translation>
    </message>
    <message>
        <source>Could not stop job %1: %2</source>
        <translation>Job %1 konnte nicht gestoppt werden: %2</translation>
    </message>
    <message>
        <source>Job %1 %2; its logs and events are under jobs/%1/ in the bucket.</source>
        <translation>Job %1: %2; seine Logs und Ereignisse liegen unter jobs/%1/ im Bucket.</translation>
    </message>
    <message>
        <source>Delete job</source>
        <translation>Job löschen</translation>
    </message>
    <message>
        <source>Delete job %1 (%2) for good?

Its RayJob, if it still runs, is deleted without an archive, and its logs, events and record are removed from the bucket. This cannot be undone.</source>
        <translation>Job %1 (%2) endgültig löschen?

Sein RayJob wird, falls er noch läuft, ohne Archiv gelöscht, und seine Logs, Ereignisse und sein Eintrag werden aus dem Bucket entfernt. Dies kann nicht rückgängig gemacht werden.</translation>
    </message>
    <message>
        <source>Deleting job %1…</source>
        <translation>Job %1 wird gelöscht…</translation>
    </message>
    <message>
        <source>Could not delete job %1: %2</source>
        <translation>Job %1 konnte nicht gelöscht werden: %2</translation>
    </message>
    <message numerus="yes">
        <source>Job %1 deleted: %n archived object(s) removed.</source>
        <translation>
            <numerusform>Job %1 gelöscht: %n archiviertes Objekt entfernt.</numerusform>
            <numerusform>Job %1 gelöscht: %n archivierte Objekte entfernt.</numerusform>
        </translation>
    </message>
    <message>
        <source>The RayJob of job %1 is on the clipboard.</source>
        <translation>Der RayJob von Job %1 ist in der Zwischenablage.</translation>
    </message>
    <message>
        <source>Job %1 has no RayJob on the cluster and there is no bucket to read its archive from.</source>
        <translation>Job %1 hat keinen RayJob im Cluster, und es gibt keinen Bucket, aus dem sein Archiv gelesen werden kann.</translation>
    </message>
    <message>
        <source>Job %1's RayJob is neither on the cluster nor in its archive.</source>
        <translation>Der RayJob von Job %1 ist weder im Cluster noch in seinem Archiv.</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::JobsTray</name>
    <message>
        <source>Starforge: no active jobs</source>
        <translation>Starforge: keine aktiven Jobs</translation>
    </message>
    <message numerus="yes">
        <source>Starforge: %n active job(s)</source>
        <translation>
            <numerusform>Starforge: %n aktiver Job</numerusform>
            <numerusform>Starforge: %n aktive Jobs</numerusform>
        </translation>
    </message>
    <message>
        <source>No active jobs</source>
        <translation>Keine aktiven Jobs</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>&amp;Show Starforge</source>
        <translation>Starforge &amp;anzeigen</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::LaunchDialog</name>
    <message>
        <source>Launch a model</source>
        <translation>Modell starten</translation>
    </message>
    <message>
        <source>Qwen/Qwen3-0.6B, or a checkpoint under %1</source>
        <translation>Qwen/Qwen3-0.6B oder ein Checkpoint unter %1</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <source>A model name, or the path of a checkpoint with Hugging Face weights under the storage root</source>
        <translation>Ein Modellname oder der Pfad eines Checkpoints mit Hugging-Face-Gewichten unter dem Speicher-Stammverzeichnis</translation>
    </message>
    <message>
        <source>the model's own</source>
        <translation>aus dem Modell</translation>
    </message>
    <message>
        <source>Tokenizer</source>
        <translation>Tokenizer</translation>
    </message>
    <message>
        <source>GPU series</source>
        <translation>GPU-Serie</translation>
    </message>
    <message>
        <source>GPUs (tensor parallel size)</source>
        <translation>GPUs (Tensor-Parallelgröße)</translation>
    </message>
    <message>
        <source> h</source>
        <translation> h</translation>
    </message>
    <message>
        <source>Time to live in hours</source>
        <translation>Lebensdauer in Stunden</translation>
    </message>
    <message>
        <source>The cluster ends the pod after this long, even if Starforge is closed.</source>
        <translation>Der Cluster beendet den Pod nach dieser Zeit, auch wenn Starforge geschlossen ist.</translation>
    </message>
    <message>
        <source>Maximum context length in tokens</source>
        <translation>Maximale Kontextlänge in Tokens</translation>
    </message>
    <message>
        <source>What to fix before launching</source>
        <translation>Was vor dem Start zu beheben ist</translation>
    </message>
    <message>
        <source>&amp;Launch</source>
        <translation>Sta&amp;rten</translation>
    </message>
    <message>
        <source>&amp;Model:</source>
        <translation>&amp;Modell:</translation>
    </message>
    <message>
        <source>&amp;Tokenizer:</source>
        <translation>&amp;Tokenizer:</translation>
    </message>
    <message>
        <source>GPU &amp;series:</source>
        <translation>GPU-&amp;Serie:</translation>
    </message>
    <message>
        <source>&amp;GPUs:</source>
        <translation>&amp;GPUs:</translation>
    </message>
    <message>
        <source>Time to l&amp;ive:</source>
        <translation>&amp;Lebensdauer:</translation>
    </message>
    <message>
        <source>Max &amp;context:</source>
        <translation>Max. &amp;Kontext:</translation>
    </message>
    <message>
        <source>%1 (%2 of %3 GPUs free)</source>
        <translation>%1 (%2 von %3 GPUs frei)</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::LogsPanel</name>
    <message>
        <source>F&amp;ollow</source>
        <translation>&amp;Verfolgen</translation>
    </message>
    <message>
        <source>Keep the newest line in view as the log grows</source>
        <translation>Die neueste Zeile im Blick behalten, während das Log wächst</translation>
    </message>
    <message>
        <source>First &amp;traceback</source>
        <translation>Erster &amp;Traceback</translation>
    </message>
    <message>
        <source>Go to the first Python traceback</source>
        <translation>Zum ersten Python-Traceback springen</translation>
    </message>
    <message>
        <source>Sa&amp;ve…</source>
        <translation>S&amp;peichern…</translation>
    </message>
    <message>
        <source>Save the log to a file</source>
        <translation>Log in einer Datei speichern</translation>
    </message>
    <message>
        <source>&amp;Wrap lines</source>
        <translation>&amp;Zeilen umbrechen</translation>
    </message>
    <message>
        <source>&amp;Copy</source>
        <translation>&amp;Kopieren</translation>
    </message>
    <message>
        <source>Re&amp;gex</source>
        <translation>Re&amp;gex</translation>
    </message>
    <message>
        <source>The search is a regular expression (Perl syntax)</source>
        <translation>Die Suche ist ein regulärer Ausdruck (Perl-Syntax)</translation>
    </message>
    <message>
        <source>An&amp;y case</source>
        <translation>Groß-/Kleinschreibung &amp;ignorieren</translation>
    </message>
    <message>
        <source>Match upper and lower case alike</source>
        <translation>Groß- und Kleinbuchstaben gleich behandeln</translation>
    </message>
    <message>
        <source>Only &amp;matching</source>
        <translation>Nur Tre&amp;ffer</translation>
    </message>
    <message>
        <source>Show only the lines that match the search</source>
        <translation>Nur die Zeilen anzeigen, die der Suche entsprechen</translation>
    </message>
    <message>
        <source>Pre&amp;vious</source>
        <translation>Zu&amp;rück</translation>
    </message>
    <message>
        <source>Previous match (Shift+F3)</source>
        <translation>Vorheriger Treffer (Umschalt+F3)</translation>
    </message>
    <message>
        <source>&amp;Next</source>
        <translation>&amp;Weiter</translation>
    </message>
    <message>
        <source>Next match (F3)</source>
        <translation>Nächster Treffer (F3)</translation>
    </message>
    <message>
        <source>Which log: the driver's (the submitter pod), the head's, a worker's, or an archived one</source>
        <translation>Welches Log: das des Treibers (der Submitter-Pod), des Heads, eines Workers oder ein archiviertes</translation>
    </message>
    <message>
        <source>&amp;Log:</source>
        <translation>&amp;Log:</translation>
    </message>
    <message>
        <source>Search the log</source>
        <translation>Log durchsuchen</translation>
    </message>
    <message>
        <source>Search (Ctrl+F)</source>
        <translation>Suchen (Strg+F)</translation>
    </message>
    <message>
        <source>Log lines</source>
        <translation>Log-Zeilen</translation>
    </message>
    <message>
        <source>Ctrl+C copies the selected lines; the context menu (Shift+F10) has Copy, Save and Wrap lines.</source>
        <translation>Strg+C kopiert die ausgewählten Zeilen; das Kontextmenü (Umschalt+F10) enthält Kopieren, Speichern und Zeilen umbrechen.</translation>
    </message>
    <message>
        <source>Wrap long lines at the view's width instead of cutting them (Alt+W)</source>
        <translation>Lange Zeilen an der Breite der Ansicht umbrechen, statt sie abzuschneiden (Alt+W)</translation>
    </message>
    <message>
        <source>Wrap lines</source>
        <translation>Zeilen umbrechen</translation>
    </message>
    <message>
        <source>Wraps long lines at the view's width instead of cutting them (Alt+W)</source>
        <translation>Bricht lange Zeilen an der Breite der Ansicht um, statt sie abzuschneiden (Alt+W)</translation>
    </message>
    <message>
        <source>Log lines menu</source>
        <translation>Menü der Log-Zeilen</translation>
    </message>
    <message>
        <source>&amp;Save…</source>
        <translation>&amp;Speichern…</translation>
    </message>
    <message>
        <source>Log status</source>
        <translation>Log-Status</translation>
    </message>
    <message>
        <source>Saved to %1.</source>
        <translation>Gespeichert in %1.</translation>
    </message>
    <message>
        <source>Select a job in the Jobs panel to read its logs.</source>
        <translation>Wählen Sie im Bereich Jobs einen Job aus, um seine Logs zu lesen.</translation>
    </message>
    <message numerus="yes">
        <source>Copied the first %n line(s) of the selection; Save… writes the whole log.</source>
        <translation>
            <numerusform>Die erste %n Zeile der Auswahl wurde kopiert; Speichern… schreibt das ganze Log.</numerusform>
            <numerusform>Die ersten %n Zeilen der Auswahl wurden kopiert; Speichern… schreibt das ganze Log.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Copied %n line(s).</source>
        <translation>
            <numerusform>%n Zeile kopiert.</numerusform>
            <numerusform>%n Zeilen kopiert.</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: %2/%3 (archived, %4)</source>
        <translation>%1: %2/%3 (archiviert, %4)</translation>
    </message>
    <message>
        <source>Job %1 was archived without logs.</source>
        <translation>Job %1 wurde ohne Logs archiviert.</translation>
    </message>
    <message>
        <source>Finding the pods of job %1…</source>
        <translation>Pods von Job %1 werden gesucht…</translation>
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
        <translation>%1 (vorheriger Container)</translation>
    </message>
    <message>
        <source>All pods (merged)</source>
        <translation>Alle Pods (zusammengeführt)</translation>
    </message>
    <message>
        <source>Job %1 has no pods yet.</source>
        <translation>Job %1 hat noch keine Pods.</translation>
    </message>
    <message>
        <source>Cannot make a file for the log: %1.</source>
        <translation>Für das Log kann keine Datei angelegt werden: %1.</translation>
    </message>
    <message>
        <source>Downloading the archived log…</source>
        <translation>Archiviertes Log wird heruntergeladen…</translation>
    </message>
    <message>
        <source>The log stream was interrupted (%1); reconnecting without losing or repeating a line.</source>
        <translation>Der Log-Stream wurde unterbrochen (%1); die Verbindung wird wiederhergestellt, ohne Zeilen zu verlieren oder zu wiederholen.</translation>
    </message>
    <message numerus="yes">
        <source>%n line(s)</source>
        <translation>
            <numerusform>%n Zeile</numerusform>
            <numerusform>%n Zeilen</numerusform>
        </translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation>Suche läuft…</translation>
    </message>
    <message numerus="yes">
        <source>%n matching line(s)</source>
        <translation>
            <numerusform>%n passende Zeile</numerusform>
            <numerusform>%n passende Zeilen</numerusform>
        </translation>
    </message>
    <message>
        <source>Searching… %1 %</source>
        <translation>Suche läuft… %1 %</translation>
    </message>
    <message>
        <source>No traceback in this log.</source>
        <translation>Kein Traceback in diesem Log.</translation>
    </message>
    <message>
        <source>There is no log to save.</source>
        <translation>Es gibt kein Log zum Speichern.</translation>
    </message>
    <message>
        <source>Cannot save the log to %1; choose another folder.</source>
        <translation>Das Log kann nicht in %1 gespeichert werden; wählen Sie einen anderen Ordner.</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::MainWindow</name>
    <message>
        <source>Set up a connection…</source>
        <translation>Verbindung einrichten…</translation>
    </message>
    <message>
        <source>The connection profile the window works with</source>
        <translation>Das Verbindungsprofil, mit dem das Fenster arbeitet</translation>
    </message>
    <message>
        <source>Connection profile</source>
        <translation>Verbindungsprofil</translation>
    </message>
    <message>
        <source>Profile: </source>
        <translation>Profil: </translation>
    </message>
    <message>
        <source>More tools</source>
        <translation>Weitere Werkzeuge</translation>
    </message>
    <message>
        <source>TLS verification is off</source>
        <translation>TLS-Überprüfung ist deaktiviert</translation>
    </message>
    <message>
        <source>FORGE_K8S_INSECURE_SKIP_TLS_VERIFY is on: anyone on the network path can read and change what the app sends, including the token. Use it only with throw-away clusters.</source>
        <translation>FORGE_K8S_INSECURE_SKIP_TLS_VERIFY ist aktiviert: Jeder auf dem Netzwerkpfad kann mitlesen und verändern, was die App sendet, einschließlich des Tokens. Verwenden Sie dies nur mit Wegwerf-Clustern.</translation>
    </message>
    <message>
        <source>Desktop &amp;Notifications</source>
        <translation>Desktop-&amp;Benachrichtigungen</translation>
    </message>
    <message>
        <source>Tell me when a job of mine ends or a playground pod is about to stop, while I look elsewhere</source>
        <translation>Mich benachrichtigen, wenn einer meiner Jobs endet oder ein Playground-Pod bald stoppt, während ich etwas anderes mache</translation>
    </message>
    <message>
        <source>Show in System &amp;Tray</source>
        <translation>Im &amp;Infobereich anzeigen</translation>
    </message>
    <message>
        <source>An icon with the count of active jobs; closing the window keeps following them, so their logs are archived</source>
        <translation>Ein Symbol mit der Anzahl aktiver Jobs; beim Schließen des Fensters werden sie weiter verfolgt, sodass ihre Logs archiviert werden</translation>
    </message>
    <message>
        <source>&amp;Appearance</source>
        <translation>&amp;Erscheinungsbild</translation>
    </message>
    <message>
        <source>As the &amp;System Says</source>
        <translation>Wie vom &amp;System vorgegeben</translation>
    </message>
    <message>
        <source>&amp;Light</source>
        <translation>&amp;Hell</translation>
    </message>
    <message>
        <source>&amp;Dark</source>
        <translation>&amp;Dunkel</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>&amp;Sprache</translation>
    </message>
    <message>
        <source>Starforge speaks the new language from its next start.</source>
        <translation>Starforge verwendet die neue Sprache ab dem nächsten Start.</translation>
    </message>
    <message>
        <source>%1 stops in %2 min</source>
        <translation>%1 stoppt in %2 min</translation>
    </message>
    <message>
        <source>The playground pod %1 reaches its time to live; Extend in the Playground launches a new one.</source>
        <translation>Der Playground-Pod %1 erreicht das Ende seiner Lebensdauer; Verlängern im Playground startet einen neuen.</translation>
    </message>
    <message>
        <source>Open JobSpec</source>
        <translation>JobSpec öffnen</translation>
    </message>
    <message>
        <source>Cannot resubmit: the job's JobSpec does not read: %1</source>
        <translation>Erneutes Einreichen nicht möglich: Die JobSpec des Jobs ist nicht lesbar: %1</translation>
    </message>
    <message>
        <source>Resubmit %1: choose its code folder; this machine has not submitted it before.</source>
        <translation>%1 erneut einreichen: Wählen Sie den Code-Ordner; dieser Rechner hat den Job noch nicht eingereicht.</translation>
    </message>
    <message>
        <source>Starforge is still running</source>
        <translation>Starforge läuft weiter</translation>
    </message>
    <message>
        <source>It follows your jobs from the tray; Quit in the tray's menu ends it.</source>
        <translation>Es verfolgt Ihre Jobs vom Infobereich aus; Beenden im Menü des Infobereichs beendet es.</translation>
    </message>
    <message>
        <source>Jobs</source>
        <translation>Jobs</translation>
    </message>
    <message>
        <source>GPU Capacity</source>
        <translation>GPU-Kapazität</translation>
    </message>
    <message>
        <source>Playground</source>
        <translation>Playground</translation>
    </message>
    <message>
        <source>Job</source>
        <translation>Job</translation>
    </message>
    <message>
        <source>Events</source>
        <translation>Ereignisse</translation>
    </message>
    <message>
        <source>Logs</source>
        <translation>Logs</translation>
    </message>
    <message>
        <source>Go to %1</source>
        <translation>Zu %1 wechseln</translation>
    </message>
    <message>
        <source>(no profiles)</source>
        <translation>(keine Profile)</translation>
    </message>
    <message>
        <source>(none active)</source>
        <translation>(keines aktiv)</translation>
    </message>
    <message>
        <source>Not connected: no connection profile yet</source>
        <translation>Nicht verbunden: noch kein Verbindungsprofil</translation>
    </message>
    <message>
        <source>Not connected: no profile is active</source>
        <translation>Nicht verbunden: kein Profil aktiv</translation>
    </message>
    <message>
        <source>Not connected: %1</source>
        <translation>Nicht verbunden: %1</translation>
    </message>
    <message>
        <source>Not connected: the profile has no API server (FORGE_K8S_API_SERVER)</source>
        <translation>Nicht verbunden: Das Profil hat keinen API-Server (FORGE_K8S_API_SERVER)</translation>
    </message>
    <message>
        <source>Profile: %1</source>
        <translation>Profil: %1</translation>
    </message>
    <message>
        <source>Sandbox (until the app quits)</source>
        <translation>Sandbox (bis die App beendet wird)</translation>
    </message>
    <message>
        <source>Profile: none</source>
        <translation>Profil: keines</translation>
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
        <translation>Role-Regeln, die die fehlenden Funktionen erlauben würden:

%1</translation>
    </message>
    <message>
        <source>%1 — Starforge</source>
        <translation>%1 — Starforge</translation>
    </message>
    <message>
        <source>Sandbox — Starforge</source>
        <translation>Sandbox — Starforge</translation>
    </message>
    <message>
        <source>Starforge</source>
        <translation>Starforge</translation>
    </message>
    <message>
        <source>&lt;h2&gt;Welcome to Starforge&lt;/h2&gt;&lt;p&gt;Run NeMo-RL training on Kubernetes and KubeRay from here.&lt;/p&gt;&lt;p&gt;Choose how to connect:&lt;/p&gt;</source>
        <translation>&lt;h2&gt;Willkommen bei Starforge&lt;/h2&gt;&lt;p&gt;Führen Sie von hier aus NeMo-RL-Trainings auf Kubernetes und KubeRay aus.&lt;/p&gt;&lt;p&gt;Wählen Sie, wie Sie sich verbinden möchten:&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;h2&gt;%1&lt;/h2&gt;&lt;p&gt;%2&lt;/p&gt;</source>
        <translation>&lt;h2&gt;%1&lt;/h2&gt;&lt;p&gt;%2&lt;/p&gt;</translation>
    </message>
    <message>
        <source>No active profile</source>
        <translation>Kein aktives Profil</translation>
    </message>
    <message>
        <source>Connection profiles…</source>
        <translation>Verbindungsprofile…</translation>
    </message>
    <message>
        <source>A job is being prepared in the open wizard; submit or cancel it first.</source>
        <translation>Im geöffneten Assistenten wird ein Job vorbereitet; reichen Sie ihn zuerst ein oder brechen Sie ihn ab.</translation>
    </message>
    <message>
        <source>Job %1 submitted</source>
        <translation>Job %1 eingereicht</translation>
    </message>
    <message>
        <source>Saving profile %1…</source>
        <translation>Profil %1 wird gespeichert…</translation>
    </message>
    <message>
        <source>Starting the sandbox cluster…</source>
        <translation>Sandbox-Cluster wird gestartet…</translation>
    </message>
    <message>
        <source>The sandbox is running; kubectl reaches it with KUBECONFIG=%1</source>
        <translation>Die Sandbox läuft; kubectl erreicht sie mit KUBECONFIG=%1</translation>
    </message>
    <message>
        <source>The sandbox did not start: %1</source>
        <translation>Die Sandbox konnte nicht gestartet werden: %1</translation>
    </message>
    <message>
        <source>About Starforge</source>
        <translation>Über Starforge</translation>
    </message>
    <message>
        <source>Starforge Desktop %1

Run NeMo-RL training on Kubernetes and KubeRay from the desktop.
Qt %2.</source>
        <translation>Starforge Desktop %1

NeMo-RL-Trainings auf Kubernetes und KubeRay vom Desktop aus ausführen.
Qt %2.</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::MatchScrollBar</name>
    <message>
        <source>Log position and match overview</source>
        <translation>Log-Position und Trefferübersicht</translation>
    </message>
    <message>
        <source>Scrolls the log. No search matches are marked.</source>
        <translation>Scrollt das Log. Keine Suchtreffer markiert.</translation>
    </message>
    <message numerus="yes">
        <source>Scrolls the log. %n search match(es) are marked along it; F3 and Shift+F3 go to them.</source>
        <translation>
            <numerusform>Scrollt das Log. %n Suchtreffer ist darauf markiert; F3 und Umschalt+F3 springen dorthin.</numerusform>
            <numerusform>Scrollt das Log. %n Suchtreffer sind darauf markiert; F3 und Umschalt+F3 springen dorthin.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::MessageCard</name>
    <message>
        <source>Message</source>
        <translation>Nachricht</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>Bearbeiten</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>Neu generieren</translation>
    </message>
    <message>
        <source>…</source>
        <translation>…</translation>
    </message>
    <message>
        <source>Your message</source>
        <translation>Ihre Nachricht</translation>
    </message>
    <message>
        <source>Reply from %1</source>
        <translation>Antwort von %1</translation>
    </message>
    <message>
        <source>Reply from %1%2</source>
        <translation>Antwort von %1%2</translation>
    </message>
    <message>
        <source>, still writing</source>
        <translation>, schreibt noch</translation>
    </message>
    <message>
        <source>Copy your message</source>
        <translation>Ihre Nachricht kopieren</translation>
    </message>
    <message>
        <source>Copy the reply</source>
        <translation>Antwort kopieren</translation>
    </message>
    <message>
        <source>Edit this message and send it again</source>
        <translation>Diese Nachricht bearbeiten und erneut senden</translation>
    </message>
    <message>
        <source>Copy code</source>
        <translation>Code kopieren</translation>
    </message>
    <message>
        <source>Copy code %1</source>
        <translation>Code %1 kopieren</translation>
    </message>
    <message>
        <source>Copy code block %1</source>
        <translation>Codeblock %1 kopieren</translation>
    </message>
    <message>
        <source>Copy code block %1 (%2)</source>
        <translation>Codeblock %1 kopieren (%2)</translation>
    </message>
    <message>
        <source>Copies this block's code alone</source>
        <translation>Kopiert nur den Code dieses Blocks</translation>
    </message>
    <message>
        <source>Copies this %1 block's code alone</source>
        <translation>Kopiert nur den Code dieses %1-Blocks</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::NewConnectionDialog</name>
    <message>
        <source>Connect to a Cluster</source>
        <translation>Mit einem Cluster verbinden</translation>
    </message>
    <message>
        <source>The API server and a token are enough to start. Everything else has a default you can change later under Connection Profiles.</source>
        <translation>Der API-Server und ein Token genügen für den Anfang. Alles andere hat einen Standardwert, den Sie später unter Verbindungsprofile ändern können.</translation>
    </message>
    <message>
        <source>kept in the OS keychain only</source>
        <translation>nur im Schlüsselbund des Betriebssystems gespeichert</translation>
    </message>
    <message>
        <source>optional: for a private certificate authority</source>
        <translation>optional: für eine private Zertifizierungsstelle</translation>
    </message>
    <message>
        <source>…</source>
        <translation>…</translation>
    </message>
    <message>
        <source>Choose the CA file</source>
        <translation>CA-Datei auswählen</translation>
    </message>
    <message>
        <source>Profile &amp;name:</source>
        <translation>Profil&amp;name:</translation>
    </message>
    <message>
        <source>&amp;API server:</source>
        <translation>&amp;API-Server:</translation>
    </message>
    <message>
        <source>&amp;Token:</source>
        <translation>&amp;Token:</translation>
    </message>
    <message>
        <source>Names&amp;pace:</source>
        <translation>Names&amp;pace:</translation>
    </message>
    <message>
        <source>&amp;CA file:</source>
        <translation>&amp;CA-Datei:</translation>
    </message>
    <message>
        <source>CA file</source>
        <translation>CA-Datei</translation>
    </message>
    <message>
        <source>C&amp;reate and Connect</source>
        <translation>&amp;Erstellen und verbinden</translation>
    </message>
    <message>
        <source>CA certificates (PEM)</source>
        <translation>CA-Zertifikate (PEM)</translation>
    </message>
    <message>
        <source>PEM files (*.pem *.crt);;All files (*)</source>
        <translation>PEM-Dateien (*.pem *.crt);;Alle Dateien (*)</translation>
    </message>
    <message>
        <source>Profile name: %1</source>
        <translation>Profilname: %1</translation>
    </message>
    <message>
        <source>Profile name: a profile named %1 already exists.</source>
        <translation>Profilname: Ein Profil namens %1 existiert bereits.</translation>
    </message>
    <message>
        <source>API server: enter its URL, e.g. https://api.example.com:6443.</source>
        <translation>API-Server: Geben Sie seine URL ein, z. B. https://api.example.com:6443.</translation>
    </message>
    <message>
        <source>Token: paste a bearer token (kubectl create token NAME makes one).</source>
        <translation>Token: Fügen Sie ein Bearer-Token ein (kubectl create token NAME erzeugt eines).</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::PlaygroundPanel</name>
    <message>
        <source>&amp;Launch…</source>
        <translation>&amp;Starten…</translation>
    </message>
    <message>
        <source>Stop pod</source>
        <translation>Pod stoppen</translation>
    </message>
    <message>
        <source>Exten&amp;d…</source>
        <translation>&amp;Verlängern…</translation>
    </message>
    <message>
        <source>&amp;New</source>
        <translation>&amp;Neu</translation>
    </message>
    <message>
        <source>E&amp;xport…</source>
        <translation>E&amp;xportieren…</translation>
    </message>
    <message>
        <source>C&amp;ompare two models</source>
        <translation>Zwei Modelle ver&amp;gleichen</translation>
    </message>
    <message>
        <source>&amp;Send</source>
        <translation>Sen&amp;den</translation>
    </message>
    <message>
        <source>S&amp;top</source>
        <translation>S&amp;toppen</translation>
    </message>
    <message>
        <source>&amp;Regenerate</source>
        <translation>Neu gene&amp;rieren</translation>
    </message>
    <message>
        <source>Playground pods</source>
        <translation>Playground-Pods</translation>
    </message>
    <message>
        <source>Your vLLM pods: the model each serves, its state and the time left before the cluster ends it</source>
        <translation>Ihre vLLM-Pods: das jeweils bereitgestellte Modell, sein Zustand und die verbleibende Zeit, bevor der Cluster den Pod beendet</translation>
    </message>
    <message>
        <source>Serve a model or a checkpoint with vLLM on a GPU pod of your own</source>
        <translation>Ein Modell oder einen Checkpoint mit vLLM auf einem eigenen GPU-Pod bereitstellen</translation>
    </message>
    <message>
        <source>Delete the selected pod now; its GPUs are free again</source>
        <translation>Den ausgewählten Pod jetzt löschen; seine GPUs werden wieder frei</translation>
    </message>
    <message>
        <source>More time for the selected model: a new pod serving it (a pod's deadline cannot be raised)</source>
        <translation>Mehr Zeit für das ausgewählte Modell: ein neuer Pod, der es bereitstellt (die Frist eines Pods kann nicht verlängert werden)</translation>
    </message>
    <message>
        <source>Why the pod is not ready</source>
        <translation>Warum der Pod nicht bereit ist</translation>
    </message>
    <message>
        <source>Playground status</source>
        <translation>Playground-Status</translation>
    </message>
    <message>
        <source>System prompt (optional)</source>
        <translation>Systemprompt (optional)</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>Systemprompt</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>Temperatur</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Maximum tokens per reply</source>
        <translation>Maximale Tokens pro Antwort</translation>
    </message>
    <message>
        <source>T&amp;emperature:</source>
        <translation>T&amp;emperatur:</translation>
    </message>
    <message>
        <source>Top-&amp;p:</source>
        <translation>Top-&amp;p:</translation>
    </message>
    <message>
        <source>Max to&amp;kens:</source>
        <translation>Max. To&amp;kens:</translation>
    </message>
    <message>
        <source>Generation settings</source>
        <translation>Generierungseinstellungen</translation>
    </message>
    <message>
        <source>Saved conversations</source>
        <translation>Gespeicherte Unterhaltungen</translation>
    </message>
    <message>
        <source>Reopen a conversation kept on this machine</source>
        <translation>Eine auf diesem Rechner gespeicherte Unterhaltung wieder öffnen</translation>
    </message>
    <message>
        <source>Start a new conversation (the current one stays saved)</source>
        <translation>Eine neue Unterhaltung beginnen (die aktuelle bleibt gespeichert)</translation>
    </message>
    <message>
        <source>Save the conversation as Markdown or JSON, with the model, settings and timings</source>
        <translation>Die Unterhaltung als Markdown oder JSON speichern, mit Modell, Einstellungen und Zeitmessungen</translation>
    </message>
    <message>
        <source>Two models side by side: each prompt goes to both</source>
        <translation>Zwei Modelle nebeneinander: Jeder Prompt geht an beide</translation>
    </message>
    <message>
        <source>&amp;History:</source>
        <translation>Ver&amp;lauf:</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Nachricht</translation>
    </message>
    <message>
        <source>Message (Ctrl+Return sends, Esc stops)</source>
        <translation>Nachricht (Strg+Eingabe sendet, Esc stoppt)</translation>
    </message>
    <message>
        <source>Send (Ctrl+Return)</source>
        <translation>Senden (Strg+Eingabe)</translation>
    </message>
    <message>
        <source>Stop the reply (Esc); vLLM stops generating</source>
        <translation>Antwort stoppen (Esc); vLLM beendet die Generierung</translation>
    </message>
    <message>
        <source>Ask again for the last reply</source>
        <translation>Die letzte Antwort erneut anfordern</translation>
    </message>
    <message>
        <source>Export the conversation</source>
        <translation>Unterhaltung exportieren</translation>
    </message>
    <message>
        <source>Markdown (*.md);;JSON (*.json)</source>
        <translation>Markdown (*.md);;JSON (*.json)</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>Exportieren</translation>
    </message>
    <message>
        <source>Could not write %1.</source>
        <translation>%1 konnte nicht geschrieben werden.</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>Unterhaltung</translation>
    </message>
    <message>
        <source>Connect to a cluster to launch models and chat with them.</source>
        <translation>Verbinden Sie sich mit einem Cluster, um Modelle zu starten und mit ihnen zu chatten.</translation>
    </message>
    <message>
        <source>The playground pods could not be listed: %1</source>
        <translation>Die Playground-Pods konnten nicht aufgelistet werden: %1</translation>
    </message>
    <message>
        <source>%1 is starting: vLLM loads the model before it answers.</source>
        <translation>%1 startet: vLLM lädt das Modell, bevor es antwortet.</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>Launch a model</source>
        <translation>Modell starten</translation>
    </message>
    <message>
        <source>Connect to a cluster first.</source>
        <translation>Verbinden Sie sich zuerst mit einem Cluster.</translation>
    </message>
    <message>
        <source>Launching %1…</source>
        <translation>%1 wird gestartet…</translation>
    </message>
    <message>
        <source>The model was not launched: %1</source>
        <translation>Das Modell wurde nicht gestartet: %1</translation>
    </message>
    <message>
        <source>%1 launched as %2; it answers once vLLM has loaded the model.</source>
        <translation>%1 als %2 gestartet; es antwortet, sobald vLLM das Modell geladen hat.</translation>
    </message>
    <message>
        <source>Delete %1 (%2) now? Its GPUs are freed; conversations with it stay saved.</source>
        <translation>%1 (%2) jetzt löschen? Seine GPUs werden freigegeben; Unterhaltungen damit bleiben gespeichert.</translation>
    </message>
    <message>
        <source>%1 is stopping.</source>
        <translation>%1 wird gestoppt.</translation>
    </message>
    <message>
        <source>Extend %1</source>
        <translation>%1 verlängern</translation>
    </message>
    <message>
        <source>Kubernetes lets a pod's deadline (activeDeadlineSeconds) only go down, so more time is a new pod serving the same model. Launch it, and stop %1 once the new one is ready; the conversation carries over by choosing the new pod as its model.</source>
        <translation>Kubernetes erlaubt nur, die Frist eines Pods (activeDeadlineSeconds) zu verkürzen, daher bedeutet mehr Zeit einen neuen Pod mit demselben Modell. Starten Sie ihn und stoppen Sie %1, sobald der neue bereit ist; die Unterhaltung wird übernommen, wenn Sie den neuen Pod als ihr Modell wählen.</translation>
    </message>
    <message>
        <source>Settings: temperature %1 · top-p %2 · %3 tokens at most</source>
        <translation>Einstellungen: Temperatur %1 · Top-p %2 · höchstens %3 Tokens</translation>
    </message>
    <message>
        <source> · system prompt</source>
        <translation> · Systemprompt</translation>
    </message>
    <message>
        <source>Edit message</source>
        <translation>Nachricht bearbeiten</translation>
    </message>
    <message>
        <source>The conversation continues from this message:</source>
        <translation>Die Unterhaltung wird ab dieser Nachricht fortgesetzt:</translation>
    </message>
    <message>
        <source>%1 (damaged: cannot be read)</source>
        <translation>%1 (beschädigt: nicht lesbar)</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>(empty)</source>
        <translation>(leer)</translation>
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
        <translation> — aktiv</translation>
    </message>
    <message>
        <source>Unapplied changes</source>
        <translation>Nicht angewendete Änderungen</translation>
    </message>
    <message>
        <source>The changes to profile %1 have not been applied. Discard them?</source>
        <translation>Die Änderungen an Profil %1 wurden nicht angewendet. Verwerfen?</translation>
    </message>
    <message>
        <source>The keychain could not be read: %1</source>
        <translation>Der Schlüsselbund konnte nicht gelesen werden: %1</translation>
    </message>
    <message>
        <source>No profiles yet. Add one, or import a context from a kubeconfig file.</source>
        <translation>Noch keine Profile. Fügen Sie eines hinzu oder importieren Sie einen Kontext aus einer kubeconfig-Datei.</translation>
    </message>
    <message>
        <source>Select a profile to see and edit its settings.</source>
        <translation>Wählen Sie ein Profil aus, um seine Einstellungen anzuzeigen und zu bearbeiten.</translation>
    </message>
    <message>
        <source>Select a setting to see what it means. Environment variables of the same name override the profile while they are set.</source>
        <translation>Wählen Sie eine Einstellung aus, um ihre Bedeutung zu sehen. Gleichnamige Umgebungsvariablen überschreiben das Profil, solange sie gesetzt sind.</translation>
    </message>
    <message>
        <source>Waiting for the keychain…</source>
        <translation>Warten auf den Schlüsselbund…</translation>
    </message>
    <message>
        <source>A profile named %1 already exists; choose another name.</source>
        <translation>Ein Profil namens %1 existiert bereits; wählen Sie einen anderen Namen.</translation>
    </message>
    <message>
        <source>Add profile</source>
        <translation>Profil hinzufügen</translation>
    </message>
    <message>
        <source>Name of the new profile (letters, digits, '.', '_', '-'):</source>
        <translation>Name des neuen Profils (Buchstaben, Ziffern, '.', '_', '-'):</translation>
    </message>
    <message>
        <source>Created profile %1. Set its API server and token to connect.</source>
        <translation>Profil %1 erstellt. Legen Sie seinen API-Server und sein Token fest, um sich zu verbinden.</translation>
    </message>
    <message>
        <source>Duplicate profile</source>
        <translation>Profil duplizieren</translation>
    </message>
    <message>
        <source>Name of the copy of %1:</source>
        <translation>Name der Kopie von %1:</translation>
    </message>
    <message>
        <source>Duplicated %1 as %2, secrets included.</source>
        <translation>%1 als %2 dupliziert, einschließlich Geheimnissen.</translation>
    </message>
    <message>
        <source>Rename profile</source>
        <translation>Profil umbenennen</translation>
    </message>
    <message>
        <source>New name of %1:</source>
        <translation>Neuer Name für %1:</translation>
    </message>
    <message>
        <source>Renamed %1 to %2.</source>
        <translation>%1 in %2 umbenannt.</translation>
    </message>
    <message>
        <source>Delete profile</source>
        <translation>Profil löschen</translation>
    </message>
    <message>
        <source>Delete profile %1 and its secrets in the keychain? This cannot be undone.</source>
        <translation>Profil %1 und seine Geheimnisse im Schlüsselbund löschen? Dies kann nicht rückgängig gemacht werden.</translation>
    </message>
    <message>
        <source>Keychain unavailable</source>
        <translation>Schlüsselbund nicht verfügbar</translation>
    </message>
    <message>
        <source>%1

Delete the profile anyway and leave its secrets in the keychain?</source>
        <translation>%1

Das Profil trotzdem löschen und seine Geheimnisse im Schlüsselbund belassen?</translation>
    </message>
    <message>
        <source>Deleted profile %1, but %2</source>
        <translation>Profil %1 gelöscht, aber %2</translation>
    </message>
    <message>
        <source>Deleted profile %1.</source>
        <translation>Profil %1 gelöscht.</translation>
    </message>
    <message>
        <source>Import kubeconfig</source>
        <translation>kubeconfig importieren</translation>
    </message>
    <message>
        <source>%1 defines no contexts; there is nothing to import.</source>
        <translation>%1 definiert keine Kontexte; es gibt nichts zu importieren.</translation>
    </message>
    <message>
        <source>Context to import from %1:</source>
        <translation>Aus %1 zu importierender Kontext:</translation>
    </message>
    <message>
        <source>Profile to create or update from context %1:</source>
        <translation>Aus Kontext %1 zu erstellendes oder zu aktualisierendes Profil:</translation>
    </message>
    <message>
        <source>Profile %1 exists. Replace its API server, CA, TLS, proxy and credential settings with those of context %2?</source>
        <translation>Profil %1 existiert. Seine Einstellungen für API-Server, CA, TLS, Proxy und Anmeldedaten durch die von Kontext %2 ersetzen?</translation>
    </message>
    <message>
        <source>Imported context %1 into profile %2.</source>
        <translation>Kontext %1 in Profil %2 importiert.</translation>
    </message>
    <message>
        <source>Took %1</source>
        <translation>Übernommen: %1</translation>
    </message>
    <message>
        <source>Note: %1</source>
        <translation>Hinweis: %1</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; — active</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; — aktiv</translation>
    </message>
    <message>
        <source>%1 is the active profile.</source>
        <translation>%1 ist das aktive Profil.</translation>
    </message>
    <message numerus="yes">
        <source>Saved %n change(s) to profile %1.</source>
        <translation>
            <numerusform>%n Änderung an Profil %1 gespeichert.</numerusform>
            <numerusform>%n Änderungen an Profil %1 gespeichert.</numerusform>
        </translation>
    </message>
    <message>
        <source>Testing the saved settings of %1; apply your edits to test them.</source>
        <translation>Die gespeicherten Einstellungen von %1 werden getestet; wenden Sie Ihre Änderungen an, um sie zu testen.</translation>
    </message>
    <message>
        <source>profile %1</source>
        <translation>Profil %1</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ProgressPlot</name>
    <message>
        <source>Training progress plot</source>
        <translation>Diagramm des Trainingsfortschritts</translation>
    </message>
    <message>
        <source>No training metrics yet: they appear once the driver's log reports a step.</source>
        <translation>Noch keine Trainingsmetriken: Sie erscheinen, sobald das Log des Treibers einen Schritt meldet.</translation>
    </message>
    <message numerus="yes">
        <source>%1 over %n step(s): %2 at step %3, %4 at step %5.</source>
        <translation>
            <numerusform>%1 über %n Schritt: %2 bei Schritt %3, %4 bei Schritt %5.</numerusform>
            <numerusform>%1 über %n Schritte: %2 bei Schritt %3, %4 bei Schritt %5.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n step(s) reported nan.</source>
        <translation>
            <numerusform>%n Schritt hat nan gemeldet.</numerusform>
            <numerusform>%n Schritte haben nan gemeldet.</numerusform>
        </translation>
    </message>
    <message>
        <source>Cursor: step %1, %2 %3.</source>
        <translation>Cursor: Schritt %1, %2 %3.</translation>
    </message>
    <message>
        <source>No metrics yet</source>
        <translation>Noch keine Metriken</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>Schritt %1</translation>
    </message>
    <message>
        <source>step %1: %2</source>
        <translation>Schritt %1: %2</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::RecipePage</name>
    <message>
        <source>&amp;Script:</source>
        <translation>&amp;Skript:</translation>
    </message>
    <message>
        <source>A&amp;dd override</source>
        <translation>Überschreibung &amp;hinzufügen</translation>
    </message>
    <message>
        <source>Add an override</source>
        <translation>Eine Überschreibung hinzufügen</translation>
    </message>
    <message>
        <source>Remove override</source>
        <translation>Überschreibung entfernen</translation>
    </message>
    <message>
        <source>Remove the selected override</source>
        <translation>Die ausgewählte Überschreibung entfernen</translation>
    </message>
    <message>
        <source>Environment variables</source>
        <translation>Umgebungsvariablen</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>Wert</translation>
    </message>
    <message>
        <source>Add &amp;variable</source>
        <translation>&amp;Variable hinzufügen</translation>
    </message>
    <message>
        <source>Add an environment variable</source>
        <translation>Eine Umgebungsvariable hinzufügen</translation>
    </message>
    <message>
        <source>Remove variable</source>
        <translation>Variable entfernen</translation>
    </message>
    <message>
        <source>Remove the selected environment variable</source>
        <translation>Die ausgewählte Umgebungsvariable entfernen</translation>
    </message>
    <message>
        <source>Environment variables from Kubernetes Secrets</source>
        <translation>Umgebungsvariablen aus Kubernetes-Secrets</translation>
    </message>
    <message>
        <source>Secret</source>
        <translation>Secret</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>Schlüssel</translation>
    </message>
    <message>
        <source>Add secret variab&amp;le</source>
        <translation>Secret-Variab&amp;le hinzufügen</translation>
    </message>
    <message>
        <source>Add a variable from a Secret</source>
        <translation>Eine Variable aus einem Secret hinzufügen</translation>
    </message>
    <message>
        <source>Remove secret variable</source>
        <translation>Secret-Variable entfernen</translation>
    </message>
    <message>
        <source>Remove the selected secret variable</source>
        <translation>Die ausgewählte Secret-Variable entfernen</translation>
    </message>
    <message>
        <source>Recipe</source>
        <translation>Rezept</translation>
    </message>
    <message>
        <source>What NeMo-RL runs: the entry point, its config and overrides, the image and the environment.</source>
        <translation>Was NeMo-RL ausführt: der Einstiegspunkt, seine Konfiguration und Überschreibungen, das Image und die Umgebung.</translation>
    </message>
    <message>
        <source>Algorithm or script</source>
        <translation>Algorithmus oder Skript</translation>
    </message>
    <message>
        <source>%1 (examples/run_%1.py)</source>
        <translation>%1 (examples/run_%1.py)</translation>
    </message>
    <message>
        <source>A script from the code folder</source>
        <translation>Ein Skript aus dem Code-Ordner</translation>
    </message>
    <message>
        <source>Script</source>
        <translation>Skript</translation>
    </message>
    <message>
        <source>Config file</source>
        <translation>Konfigurationsdatei</translation>
    </message>
    <message>
        <source>Overrides</source>
        <translation>Überschreibungen</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>Image</translation>
    </message>
    <message>
        <source>&amp;Algorithm:</source>
        <translation>&amp;Algorithmus:</translation>
    </message>
    <message>
        <source>&amp;Config:</source>
        <translation>&amp;Konfiguration:</translation>
    </message>
    <message>
        <source>&amp;Image:</source>
        <translation>&amp;Image:</translation>
    </message>
    <message>
        <source>&amp;Overrides (Hydra: key=value, +key=value, ~key):</source>
        <translation>Übe&amp;rschreibungen (Hydra: key=value, +key=value, ~key):</translation>
    </message>
    <message>
        <source>&amp;Environment (not RAY_ or FORGE_ names):</source>
        <translation>&amp;Umgebung (keine Namen mit RAY_ oder FORGE_):</translation>
    </message>
    <message>
        <source>Secre&amp;t environment (from a Kubernetes Secret):</source>
        <translation>Secre&amp;t-Umgebung (aus einem Kubernetes-Secret):</translation>
    </message>
    <message>
        <source>Empty: the profile's image (FORGE_IMAGE_NEMO_RL), %1.</source>
        <translation>Leer: das Image des Profils (FORGE_IMAGE_NEMO_RL), %1.</translation>
    </message>
    <message>
        <source>recipe.config: %1 is not a packed file of the code folder; pick one from the list.</source>
        <translation>recipe.config: %1 ist keine gepackte Datei des Code-Ordners; wählen Sie eine aus der Liste.</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ResourcesPage</name>
    <message>
        <source>Add a &amp;generation pool</source>
        <translation>&amp;Generierungs-Pool hinzufügen</translation>
    </message>
    <message>
        <source>&amp;Remove the second pool</source>
        <translation>Zweiten Pool &amp;entfernen</translation>
    </message>
    <message>
        <source>Mount the &amp;storage volume (checkpoints, results)</source>
        <translation>&amp;Speicher-Volume einbinden (Checkpoints, Ergebnisse)</translation>
    </message>
    <message>
        <source>Mount the &amp;corpus volume, read-only</source>
        <translation>&amp;Korpus-Volume schreibgeschützt einbinden</translation>
    </message>
    <message>
        <source>Submit it &amp;anyway: it waits as Pending until the cluster has such nodes</source>
        <translation>&amp;Trotzdem einreichen: Er wartet als Pending, bis der Cluster solche Knoten hat</translation>
    </message>
    <message>
        <source>Resources</source>
        <translation>Ressourcen</translation>
    </message>
    <message>
        <source>The pools of GPU machines the job runs on, with what the cluster has free now, and its volumes.</source>
        <translation>Die Pools von GPU-Maschinen, auf denen der Job läuft, mit der derzeit freien Kapazität des Clusters, und seine Volumes.</translation>
    </message>
    <message>
        <source>Pools</source>
        <translation>Pools</translation>
    </message>
    <message>
        <source>Pool</source>
        <translation>Pool</translation>
    </message>
    <message>
        <source>GPU series (free/total)</source>
        <translation>GPU-Serie (frei/gesamt)</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <source>GPUs per node</source>
        <translation>GPUs pro Knoten</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>Passung</translation>
    </message>
    <message>
        <source>Add a generation pool</source>
        <translation>Einen Generierungs-Pool hinzufügen</translation>
    </message>
    <message>
        <source>Remove the second pool</source>
        <translation>Den zweiten Pool entfernen</translation>
    </message>
    <message>
        <source>Mount the storage volume</source>
        <translation>Speicher-Volume einbinden</translation>
    </message>
    <message>
        <source>Mount the corpus volume</source>
        <translation>Korpus-Volume einbinden</translation>
    </message>
    <message>
        <source>Submit a job that can never fit anyway</source>
        <translation>Einen Job trotzdem einreichen, der nie passen kann</translation>
    </message>
    <message>
        <source>Pools (the first holds the Ray head):</source>
        <translation>Pools (der erste enthält den Ray-Head):</translation>
    </message>
    <message>
        <source>primary pool</source>
        <translation>Haupt-Pool</translation>
    </message>
    <message>
        <source>second pool</source>
        <translation>Zweiter Pool</translation>
    </message>
    <message>
        <source>Name of the %1</source>
        <translation>%1: Name</translation>
    </message>
    <message>
        <source>GPU series of the %1</source>
        <translation>%1: GPU-Serie</translation>
    </message>
    <message>
        <source>Nodes of the %1</source>
        <translation>%1: Knoten</translation>
    </message>
    <message>
        <source>GPUs per node of the %1</source>
        <translation>%1: GPUs pro Knoten</translation>
    </message>
    <message>
        <source>Fit of the %1</source>
        <translation>%1: Passung</translation>
    </message>
    <message>
        <source>%1 — %2/%3 GPUs free</source>
        <translation>%1 — %2/%3 GPUs frei</translation>
    </message>
    <message>
        <source>%1 — not in this cluster</source>
        <translation>%1 — nicht in diesem Cluster</translation>
    </message>
    <message>
        <source>Volume claim %1 at %2%3.</source>
        <translation>Volume-Claim %1 unter %2%3.</translation>
    </message>
    <message>
        <source>, shared between nodes</source>
        <translation>, von den Knoten gemeinsam genutzt</translation>
    </message>
    <message>
        <source>, not shared between nodes</source>
        <translation>, nicht von den Knoten gemeinsam genutzt</translation>
    </message>
    <message>
        <source>Off: the profile has no storage volume claim (FORGE_K8S_STORAGE_PVC).</source>
        <translation>Aus: Das Profil hat keinen Volume-Claim für den Speicher (FORGE_K8S_STORAGE_PVC).</translation>
    </message>
    <message>
        <source>Volume claim %1, read-only.</source>
        <translation>Volume-Claim %1, schreibgeschützt.</translation>
    </message>
    <message>
        <source>Off: the profile has no corpus volume claim (FORGE_K8S_CORPUS_PVC).</source>
        <translation>Aus: Das Profil hat keinen Volume-Claim für das Korpus (FORGE_K8S_CORPUS_PVC).</translation>
    </message>
    <message>
        <source>%1 runs on one pool: only %2 generate on a pool of their own.</source>
        <translation>%1 läuft auf einem Pool: Nur %2 generieren auf einem eigenen Pool.</translation>
    </message>
    <message>
        <source>pools[%1]: %2 can never run on this cluster: %3</source>
        <translation>pools[%1]: %2 kann nie auf diesem Cluster laufen: %3</translation>
    </message>
    <message>
        <source>The job fits once busy GPUs free up; it waits as Pending until then (you can submit it now).</source>
        <translation>Der Job passt, sobald belegte GPUs frei werden; bis dahin wartet er als Pending (Sie können ihn jetzt einreichen).</translation>
    </message>
    <message>
        <source>Capacity unknown</source>
        <translation>Kapazität unbekannt</translation>
    </message>
    <message>
        <source>Not connected: the fit verdict appears once the cluster answers.</source>
        <translation>Nicht verbunden: Die Passungsprüfung erscheint, sobald der Cluster antwortet.</translation>
    </message>
    <message>
        <source>Reading the cluster's nodes and pods…</source>
        <translation>Knoten und Pods des Clusters werden gelesen…</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::ReviewPage</name>
    <message>
        <source>&amp;Copy RayJob</source>
        <translation>RayJob &amp;kopieren</translation>
    </message>
    <message>
        <source>&amp;Save JobSpec…</source>
        <translation>JobSpec &amp;speichern…</translation>
    </message>
    <message>
        <source>Review</source>
        <translation>Überprüfung</translation>
    </message>
    <message>
        <source>The RayJob this creates, exactly as it will be sent (only the Capsule URL's signature is made again), and the Capsule.</source>
        <translation>Der RayJob, den dies erzeugt, genau so, wie er gesendet wird (nur die Signatur der Capsule-URL wird neu erstellt), und die Capsule.</translation>
    </message>
    <message>
        <source>S&amp;ubmit</source>
        <translation>&amp;Einreichen</translation>
    </message>
    <message>
        <source>The RayJob, as JSON</source>
        <translation>Der RayJob als JSON</translation>
    </message>
    <message>
        <source>Copy the RayJob to the clipboard</source>
        <translation>Den RayJob in die Zwischenablage kopieren</translation>
    </message>
    <message>
        <source>Save the JobSpec to a file</source>
        <translation>Die JobSpec in einer Datei speichern</translation>
    </message>
    <message>
        <source>&amp;RayJob (ray.io/v1):</source>
        <translation>&amp;RayJob (ray.io/v1):</translation>
    </message>
    <message>
        <source>Saved to %1</source>
        <translation>Gespeichert in %1</translation>
    </message>
    <message>
        <source>Cannot save the JobSpec to %1: %2. Choose another folder.</source>
        <translation>Die JobSpec kann nicht in %1 gespeichert werden: %2. Wählen Sie einen anderen Ordner.</translation>
    </message>
    <message>
        <source>Building the Capsule to know its content address…</source>
        <translation>Capsule wird gebaut, um ihre Inhaltsadresse zu ermitteln…</translation>
    </message>
    <message>
        <source>The Capsule cannot be built: %1</source>
        <translation>Die Capsule kann nicht gebaut werden: %1</translation>
    </message>
    <message>
        <source>Capsule %1…: %2 files, %3 zipped (object capsules/%4.zip). The bucket is asked for it before any upload: an unchanged folder is not uploaded again.</source>
        <translation>Capsule %1…: %2 Dateien, %3 gepackt (Objekt capsules/%4.zip). Vor jedem Upload wird der Bucket danach gefragt: Ein unveränderter Ordner wird nicht erneut hochgeladen.</translation>
    </message>
    <message>
        <source>Not connected: connect to a cluster (the profile in the toolbar) to see and submit the RayJob.</source>
        <translation>Nicht verbunden: Verbinden Sie sich mit einem Cluster (das Profil in der Werkzeugleiste), um den RayJob zu sehen und einzureichen.</translation>
    </message>
    <message>
        <source>KubeRay %1 enforces it (spec.preRunningDeadlineSeconds, from 1.6), and the app as well</source>
        <translation>KubeRay %1 setzt sie durch (spec.preRunningDeadlineSeconds, ab 1.6), und die App ebenfalls</translation>
    </message>
    <message>
        <source>this app enforces it: KubeRay %1 predates spec.preRunningDeadlineSeconds (1.6), so it is an annotation the app's tracker reads</source>
        <translation>diese App setzt sie durch: KubeRay %1 ist älter als spec.preRunningDeadlineSeconds (1.6), daher ist sie eine Annotation, die der Tracker der App liest</translation>
    </message>
    <message>
        <source>Pre-running deadline: %1 s (FORGE_KUBERAY_PRERUNNING_DEADLINE_S); %2. TTL after it ends: %3 s (FORGE_KUBERAY_TTL_SECONDS, ttlSecondsAfterFinished, which KubeRay %4 applies).</source>
        <translation>Startfrist: %1 s (FORGE_KUBERAY_PRERUNNING_DEADLINE_S); %2. TTL nach dem Ende: %3 s (FORGE_KUBERAY_TTL_SECONDS, ttlSecondsAfterFinished, das KubeRay %4 anwendet).</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::SettingDelegate</name>
    <message>
        <source>%1 (default)</source>
        <translation>%1 (Standard)</translation>
    </message>
    <message>
        <source>paste the new value; it goes to the keychain</source>
        <translation>neuen Wert einfügen; er wird im Schlüsselbund gespeichert</translation>
    </message>
    <message>
        <source>default: %1</source>
        <translation>Standard: %1</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::SignInDialog</name>
    <message>
        <source>&amp;Send</source>
        <translation>&amp;Senden</translation>
    </message>
    <message>
        <source>&amp;Cancel sign-in</source>
        <translation>Anmeldung &amp;abbrechen</translation>
    </message>
    <message>
        <source>Sign in to the cluster</source>
        <translation>Am Cluster anmelden</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; is signing you in. Follow what it says below; the window goes on once it is done.</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; meldet Sie an. Folgen Sie den Anweisungen unten; das Fenster fährt fort, sobald die Anmeldung abgeschlossen ist.</translation>
    </message>
    <message>
        <source>What the sign-in program says</source>
        <translation>Ausgabe des Anmeldeprogramms</translation>
    </message>
    <message>
        <source>Answer to the sign-in program</source>
        <translation>Antwort an das Anmeldeprogramm</translation>
    </message>
    <message>
        <source>Type an answer if it asks for one, then Send</source>
        <translation>Geben Sie eine Antwort ein, falls danach gefragt wird, und klicken Sie dann auf Senden</translation>
    </message>
    <message>
        <source>Signing in failed: %1</source>
        <translation>Anmeldung fehlgeschlagen: %1</translation>
    </message>
    <message>
        <source>&amp;Close</source>
        <translation>S&amp;chließen</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::SubmitPage</name>
    <message>
        <source>Build the Capsule</source>
        <translation>Capsule bauen</translation>
    </message>
    <message>
        <source>Check the bucket for it</source>
        <translation>Im Bucket danach suchen</translation>
    </message>
    <message>
        <source>Upload it</source>
        <translation>Hochladen</translation>
    </message>
    <message>
        <source>Create the RayJob</source>
        <translation>RayJob erstellen</translation>
    </message>
    <message>
        <source>&amp;Try again</source>
        <translation>&amp;Erneut versuchen</translation>
    </message>
    <message>
        <source>Submit</source>
        <translation>Einreichen</translation>
    </message>
    <message>
        <source>Cancel stops at the current step and removes what this submission made.</source>
        <translation>Abbrechen stoppt beim aktuellen Schritt und entfernt, was diese Einreichung erstellt hat.</translation>
    </message>
    <message>
        <source>Submission steps</source>
        <translation>Einreichungsschritte</translation>
    </message>
    <message>
        <source>Progress of the current step</source>
        <translation>Fortschritt des aktuellen Schritts</translation>
    </message>
    <message>
        <source>Bytes and rate</source>
        <translation>Bytes und Rate</translation>
    </message>
    <message>
        <source>Try the submission again</source>
        <translation>Die Einreichung erneut versuchen</translation>
    </message>
    <message>
        <source>Not connected.</source>
        <translation>Nicht verbunden.</translation>
    </message>
    <message>
        <source>Cannot submit: %1 Connect to the cluster (the profile in the toolbar), then press Try again.</source>
        <translation>Einreichen nicht möglich: %1 Verbinden Sie sich mit dem Cluster (das Profil in der Werkzeugleiste) und klicken Sie dann auf Erneut versuchen.</translation>
    </message>
    <message>
        <source>the cluster is not connected.</source>
        <translation>Der Cluster ist nicht verbunden.</translation>
    </message>
    <message>
        <source>0 bytes: already in the bucket</source>
        <translation>0 Bytes: bereits im Bucket</translation>
    </message>
    <message>
        <source>%1: %2 of %3, %4/s</source>
        <translation>%1: %2 von %3, %4/s</translation>
    </message>
    <message>
        <source>Uploaded</source>
        <translation>Hochgeladen</translation>
    </message>
    <message>
        <source>Packed</source>
        <translation>Gepackt</translation>
    </message>
    <message>
        <source>The submission failed: %1
Nothing of it was left on the cluster. Fix the cause, then press Try again (the same job id, so never two jobs), or go Back to change the job.</source>
        <translation>Die Einreichung ist fehlgeschlagen: %1
Nichts davon ist im Cluster verblieben. Beheben Sie die Ursache und klicken Sie dann auf Erneut versuchen (dieselbe Job-ID, daher nie zwei Jobs), oder gehen Sie Zurück, um den Job zu ändern.</translation>
    </message>
    <message>
        <source>%1 uploaded</source>
        <translation>%1 hochgeladen</translation>
    </message>
    <message>
        <source>Cancelling: removing what this submission made…</source>
        <translation>Abbruch: Was diese Einreichung erstellt hat, wird entfernt…</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::SubmitWizard</name>
    <message>
        <source>New Job — Starforge</source>
        <translation>Neuer Job — Starforge</translation>
    </message>
    <message>
        <source>Submit a training job</source>
        <translation>Einen Trainingsjob einreichen</translation>
    </message>
    <message>
        <source>Code folder</source>
        <translation>Code-Ordner</translation>
    </message>
    <message>
        <source>Save JobSpec</source>
        <translation>JobSpec speichern</translation>
    </message>
    <message>
        <source>JobSpec (*.json)</source>
        <translation>JobSpec (*.json)</translation>
    </message>
    <message>
        <source>%1 does not exist: give a JobSpec file or a code folder.</source>
        <translation>%1 existiert nicht: Geben Sie eine JobSpec-Datei oder einen Code-Ordner an.</translation>
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
        <translation> (Beleg der Diagnose)</translation>
    </message>
    <message>
        <source>Event timeline</source>
        <translation>Ereignis-Zeitleiste</translation>
    </message>
    <message>
        <source>The job's events on a time axis, one lane per object, the job's phases behind. Left and Right go to the previous and next event, Up and Down to the lane above or below, + and - zoom, 0 fits the whole job, Shift+Left and Shift+Right pan.</source>
        <translation>Die Ereignisse des Jobs auf einer Zeitachse, eine Spur pro Objekt, die Phasen des Jobs im Hintergrund. Links und Rechts springen zum vorherigen und nächsten Ereignis, Auf und Ab zur Spur darüber oder darunter, + und - zoomen, 0 passt den ganzen Job ein, Umschalt+Links und Umschalt+Rechts verschieben die Ansicht.</translation>
    </message>
    <message>
        <source>No events are known for this job yet.</source>
        <translation>Für diesen Job sind noch keine Ereignisse bekannt.</translation>
    </message>
</context>
<context>
    <name>Starforge::Gui::TranscriptView</name>
    <message>
        <source>Ask something below. Replies stream in as the model writes them.</source>
        <translation>Stellen Sie unten eine Frage. Antworten erscheinen fortlaufend, während das Modell sie schreibt.</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>Unterhaltung</translation>
    </message>
    <message>
        <source>You</source>
        <translation>Sie</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <source>Regenerate the last reply</source>
        <translation>Letzte Antwort neu generieren</translation>
    </message>
</context>
<context>
    <name>Starforge::Job::JobArchiver</name>
    <message>
        <source>A job without a job id cannot be archived.</source>
        <translation>Ein Job ohne Job-ID kann nicht archiviert werden.</translation>
    </message>
    <message>
        <source>The logs of pod %1: it was never scheduled (%2).</source>
        <translation>Die Logs von Pod %1: Er wurde nie eingeplant (%2).</translation>
    </message>
    <message>
        <source>The logs of pod %1: its containers never started.</source>
        <translation>Die Logs von Pod %1: Seine Container wurden nie gestartet.</translation>
    </message>
    <message>
        <source>The log of %1 in pod %2: the container never started (%3).</source>
        <translation>Das Log von %1 in Pod %2: Der Container wurde nie gestartet (%3).</translation>
    </message>
    <message>
        <source>The RayJob %1 itself: the operator deleted it (%2 DeleteSelf, %3 s after the job ended) before Starforge archived it, and its RayCluster, submitter Job and pods went with it; its final status is the last one Starforge saw.</source>
        <translation>Der RayJob %1 selbst: Der Operator hat ihn gelöscht (%2 DeleteSelf, %3 s nach Ende des Jobs), bevor Starforge ihn archiviert hat, und mit ihm seinen RayCluster, den Submitter-Job und die Pods; sein endgültiger Status ist der zuletzt von Starforge gesehene.</translation>
    </message>
    <message>
        <source>The RayJob %1 itself was deleted before Starforge archived it (by a person or tool, or by an operator running with DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true, %2 s after the job ended); its RayCluster, submitter Job and pods went with it, and its final status is the last one Starforge saw.</source>
        <translation>Der RayJob %1 selbst wurde gelöscht, bevor Starforge ihn archiviert hat (von einer Person oder einem Tool oder von einem Operator mit DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true, %2 s nach Ende des Jobs); sein RayCluster, der Submitter-Job und die Pods wurden mit ihm entfernt, und sein endgültiger Status ist der zuletzt von Starforge gesehene.</translation>
    </message>
    <message>
        <source>The RayJob %1 itself was deleted before Starforge archived it; its RayCluster, submitter Job and pods went with it, and its final status is the last one Starforge saw.</source>
        <translation>Der RayJob %1 selbst wurde gelöscht, bevor Starforge ihn archiviert hat; sein RayCluster, der Submitter-Job und die Pods wurden mit ihm entfernt, und sein endgültiger Status ist der zuletzt von Starforge gesehene.</translation>
    </message>
    <message>
        <source>Head and worker logs: the pods of RayCluster %1 were already gone.</source>
        <translation>Head- und Worker-Logs: Die Pods von RayCluster %1 waren bereits entfernt.</translation>
    </message>
    <message>
        <source>Head and worker logs: RayCluster %1 was already deleted (%2, %3 s after the job ended).</source>
        <translation>Head- und Worker-Logs: RayCluster %1 war bereits gelöscht (%2, %3 s nach Ende des Jobs).</translation>
    </message>
    <message>
        <source>Worker logs: the operator removed the worker pods of RayCluster %1 (%2, %3 s after the job ended).</source>
        <translation>Worker-Logs: Der Operator hat die Worker-Pods von RayCluster %1 entfernt (%2, %3 s nach Ende des Jobs).</translation>
    </message>
    <message>
        <source>The driver's log: the submitter pod of %1 was already gone.</source>
        <translation>Das Log des Treibers: Der Submitter-Pod von %1 war bereits entfernt.</translation>
    </message>
    <message>
        <source>The RayJob %1 was deleted before Starforge archived it: its pods, logs and final status are gone.</source>
        <translation>Der RayJob %1 wurde gelöscht, bevor Starforge ihn archiviert hat: Seine Pods, Logs und sein endgültiger Status sind verloren.</translation>
    </message>
    <message>
        <source>Events older than an hour: the API server keeps events for an hour by default, and the job ended %1 min before it was archived.</source>
        <translation>Ereignisse, die älter als eine Stunde sind: Der API-Server bewahrt Ereignisse standardmäßig eine Stunde lang auf, und der Job endete %1 min vor seiner Archivierung.</translation>
    </message>
    <message>
        <source>Cannot make a temporary file for the log of %1 in pod %2 in %3: %4</source>
        <translation>Für das Log von %1 in Pod %2 kann in %3 keine temporäre Datei angelegt werden: %4</translation>
    </message>
    <message>
        <source>read the log of %1 in pod %2</source>
        <translation>das Log von %1 in Pod %2 lesen</translation>
    </message>
    <message>
        <source>The log of %1 in pod %2: %3</source>
        <translation>Das Log von %1 in Pod %2: %3</translation>
    </message>
    <message>
        <source>Cannot write the log of %1 in pod %2 to %3: %4</source>
        <translation>Das Log von %1 in Pod %2 kann nicht nach %3 geschrieben werden: %4</translation>
    </message>
    <message>
        <source>Archiving to %1 failed: %2 The RayJob is kept; the archive will be tried again.</source>
        <translation>Archivierung nach %1 fehlgeschlagen: %2 Der RayJob bleibt erhalten; die Archivierung wird erneut versucht.</translation>
    </message>
    <message>
        <source>delete RayJob %1</source>
        <translation>RayJob %1 löschen</translation>
    </message>
    <message>
        <source>The job is archived, but its RayJob could not be deleted: %1</source>
        <translation>Der Job ist archiviert, aber sein RayJob konnte nicht gelöscht werden: %1</translation>
    </message>
</context>
<context>
    <name>Starforge::Job::JobNotices</name>
    <message>
        <source>%1 succeeded</source>
        <translation>%1 erfolgreich abgeschlossen</translation>
    </message>
    <message>
        <source>It ran for %1 min.</source>
        <translation>Laufzeit: %1 min.</translation>
    </message>
    <message>
        <source>The job finished.</source>
        <translation>Der Job ist abgeschlossen.</translation>
    </message>
    <message>
        <source>%1 missed its start deadline</source>
        <translation>%1 hat seine Startfrist verpasst</translation>
    </message>
    <message>
        <source>%1 failed</source>
        <translation>%1 ist fehlgeschlagen</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>See its logs and events.</source>
        <translation>Sehen Sie sich seine Logs und Ereignisse an.</translation>
    </message>
    <message>
        <source>%1 was stopped</source>
        <translation>%1 wurde gestoppt</translation>
    </message>
    <message>
        <source>Stopped from elsewhere (another Starforge, the command line or kubectl).</source>
        <translation>Von anderer Stelle gestoppt (eine andere Starforge-Instanz, die Befehlszeile oder kubectl).</translation>
    </message>
    <message>
        <source>Stopped from elsewhere: %1</source>
        <translation>Von anderer Stelle gestoppt: %1</translation>
    </message>
</context>
<context>
    <name>Starforge::Job::JobTracker</name>
    <message>
        <source>The RayJob %1 was deleted outside Starforge while it was %2.</source>
        <translation>Der RayJob %1 wurde außerhalb von Starforge gelöscht, während er im Zustand %2 war.</translation>
    </message>
    <message>
        <source>The RayJob %1 was deleted outside Starforge before it was archived; what its pods still had was kept.</source>
        <translation>Der RayJob %1 wurde außerhalb von Starforge gelöscht, bevor er archiviert wurde; was seine Pods noch enthielten, wurde gesichert.</translation>
    </message>
    <message>
        <source>Not running %1 s after it was submitted (the pre-running deadline it was submitted with, FORGE_KUBERAY_PRERUNNING_DEADLINE_S = %2 s); Starforge failed it.</source>
        <translation>Läuft %1 s nach dem Einreichen noch nicht (die beim Einreichen festgelegte Startfrist, FORGE_KUBERAY_PRERUNNING_DEADLINE_S = %2 s); Starforge hat ihn als fehlgeschlagen beendet.</translation>
    </message>
    <message>
        <source>Not running %1 s after the operator started it (the pre-running deadline it was submitted with, FORGE_KUBERAY_PRERUNNING_DEADLINE_S = %2 s); Starforge failed it.</source>
        <translation>Läuft %1 s nach dem Start durch den Operator noch nicht (die beim Einreichen festgelegte Startfrist, FORGE_KUBERAY_PRERUNNING_DEADLINE_S = %2 s); Starforge hat ihn als fehlgeschlagen beendet.</translation>
    </message>
    <message>
        <source>No job %1 is on the cluster; it may have ended and been archived already (see the job history).</source>
        <translation>Kein Job %1 im Cluster; er ist möglicherweise bereits beendet und archiviert (siehe Job-Verlauf).</translation>
    </message>
    <message>
        <source>stop</source>
        <translation>stoppen</translation>
    </message>
    <message>
        <source>Stopped from Starforge while it was %1.</source>
        <translation>Aus Starforge gestoppt, während er im Zustand %1 war.</translation>
    </message>
    <message>
        <source>The RayJob %1 was deleted while no Starforge tracker ran; it was last seen %2, and how it ended is unknown.</source>
        <translation>Der RayJob %1 wurde gelöscht, während kein Starforge-Tracker lief; er wurde zuletzt im Zustand %2 gesehen, und wie er endete, ist unbekannt.</translation>
    </message>
</context>
<context>
    <name>Starforge::Job::Submitter</name>
    <message>
        <source>runner.pex was not found at %1; build the project (it is packed at build time).</source>
        <translation>runner.pex wurde unter %1 nicht gefunden; bauen Sie das Projekt (es wird beim Build gepackt).</translation>
    </message>
    <message>
        <source>Cannot make a temporary folder for the Capsule: %1.</source>
        <translation>Für die Capsule kann kein temporärer Ordner angelegt werden: %1.</translation>
    </message>
    <message>
        <source>Submission cancelled while the Capsule was being built; nothing was sent.</source>
        <translation>Einreichung abgebrochen, während die Capsule gebaut wurde; es wurde nichts gesendet.</translation>
    </message>
    <message>
        <source>Checking the bucket for the Capsule failed: %1</source>
        <translation>Die Suche nach der Capsule im Bucket ist fehlgeschlagen: %1</translation>
    </message>
    <message>
        <source>Submission cancelled during the upload; the unfinished upload was aborted.</source>
        <translation>Einreichung während des Uploads abgebrochen; der unvollendete Upload wurde abgebrochen.</translation>
    </message>
    <message>
        <source>The uploaded Capsule cannot be checked in the bucket: %1</source>
        <translation>Die hochgeladene Capsule kann im Bucket nicht geprüft werden: %1</translation>
    </message>
    <message>
        <source>The uploaded Capsule does not check out: the bucket has %1 bytes, the Capsule %2.</source>
        <translation>Die hochgeladene Capsule ist fehlerhaft: Der Bucket hat %1 Bytes, die Capsule %2.</translation>
    </message>
    <message>
        <source>The uploaded Capsule does not check out: the bucket has an object with SHA-256 %1 under its address. Submit again.</source>
        <translation>Die hochgeladene Capsule ist fehlerhaft: Der Bucket hat unter ihrer Adresse ein Objekt mit SHA-256 %1. Reichen Sie erneut ein.</translation>
    </message>
    <message>
        <source>create the RayJob %1</source>
        <translation>den RayJob %1 erstellen</translation>
    </message>
    <message>
        <source>check whether the RayJob %1 was created</source>
        <translation>prüfen, ob der RayJob %1 erstellt wurde</translation>
    </message>
    <message>
        <source>A RayJob named %1 already exists and is not this submission; nothing was changed.</source>
        <translation>Ein RayJob namens %1 existiert bereits und gehört nicht zu dieser Einreichung; es wurde nichts geändert.</translation>
    </message>
    <message>
        <source>The RayJob could not be created after %1 attempts: %2</source>
        <translation>Der RayJob konnte nach %1 Versuchen nicht erstellt werden: %2</translation>
    </message>
    <message>
        <source>Submission cancelled before it started.</source>
        <translation>Einreichung abgebrochen, bevor sie begann.</translation>
    </message>
    <message>
        <source>Submission cancelled; nothing was sent.</source>
        <translation>Einreichung abgebrochen; es wurde nichts gesendet.</translation>
    </message>
    <message>
        <source>Submission cancelled; no job was created.</source>
        <translation>Einreichung abgebrochen; es wurde kein Job erstellt.</translation>
    </message>
    <message>
        <source>delete the RayJob %1</source>
        <translation>den RayJob %1 löschen</translation>
    </message>
    <message>
        <source>Submission cancelled; the RayJob %1 was deleted.</source>
        <translation>Einreichung abgebrochen; der RayJob %1 wurde gelöscht.</translation>
    </message>
    <message>
        <source>Submission cancelled, but the RayJob %1 could not be deleted: %2</source>
        <translation>Einreichung abgebrochen, aber der RayJob %1 konnte nicht gelöscht werden: %2</translation>
    </message>
    <message>
        <source>it is still there</source>
        <translation>er existiert noch</translation>
    </message>
</context>
<context>
    <name>Starforge::Kube::ExecCredentialProvider</name>
    <message>
        <source>Signing in with %1 was cancelled.</source>
        <translation>Die Anmeldung mit %1 wurde abgebrochen.</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 needs a person to sign in (interactiveMode: Always), and there is none here. Sign in from the Starforge window, or from starforge-cli on a terminal.</source>
        <translation>Das Exec-Anmelde-Plugin %1 erfordert eine Anmeldung durch eine Person (interactiveMode: Always), aber hier ist niemand. Melden Sie sich im Starforge-Fenster oder mit starforge-cli in einem Terminal an.</translation>
    </message>
    <message>
        <source>%1 is not an executable file.</source>
        <translation>%1 ist keine ausführbare Datei.</translation>
    </message>
    <message>
        <source>'%1' is not on PATH.</source>
        <translation>'%1' ist nicht im PATH.</translation>
    </message>
    <message>
        <source>Install it, or give its full path in the kubeconfig's user.exec.command (FORGE_K8S_EXEC).</source>
        <translation>Installieren Sie es oder geben Sie seinen vollständigen Pfad in user.exec.command der kubeconfig an (FORGE_K8S_EXEC).</translation>
    </message>
    <message>
        <source>Cannot sign in: the exec credential plugin %1 %2</source>
        <translation>Anmeldung nicht möglich: Das Exec-Anmelde-Plugin %1 %2</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 could not be started: %2</source>
        <translation>Das Exec-Anmelde-Plugin %1 konnte nicht gestartet werden: %2</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 crashed.</source>
        <translation>Das Exec-Anmelde-Plugin %1 ist abgestürzt.</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 failed (exit code %2).</source>
        <translation>Das Exec-Anmelde-Plugin %1 ist fehlgeschlagen (Exit-Code %2).</translation>
    </message>
    <message>
        <source>It said: %1</source>
        <translation>Meldung: %1</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 printed no ExecCredential on its standard output (%2).</source>
        <translation>Das Exec-Anmelde-Plugin %1 hat kein ExecCredential auf seiner Standardausgabe ausgegeben (%2).</translation>
    </message>
    <message>
        <source>it printed nothing</source>
        <translation>keine Ausgabe</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 printed a '%2', not an ExecCredential.</source>
        <translation>Das Exec-Anmelde-Plugin %1 hat ein '%2' ausgegeben, kein ExecCredential.</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 answered in %2, but the kubeconfig asks for %3; set the exec apiVersion to what the plugin speaks.</source>
        <translation>Das Exec-Anmelde-Plugin %1 hat mit %2 geantwortet, aber die kubeconfig verlangt %3; setzen Sie die apiVersion von exec auf die Version, die das Plugin spricht.</translation>
    </message>
    <message>
        <source>no apiVersion</source>
        <translation>keine apiVersion</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 gave an expirationTimestamp that is not RFC 3339: '%2'.</source>
        <translation>Das Exec-Anmelde-Plugin %1 hat einen expirationTimestamp geliefert, der nicht RFC 3339 entspricht: '%2'.</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 returned a credential that expired at %2; check this machine's clock.</source>
        <translation>Das Exec-Anmelde-Plugin %1 hat Anmeldedaten geliefert, die um %2 abgelaufen sind; prüfen Sie die Uhr dieses Rechners.</translation>
    </message>
    <message>
        <source>the certificate exec plugin %1 returned</source>
        <translation>das vom Exec-Plugin %1 gelieferte Zertifikat</translation>
    </message>
    <message>
        <source>the key exec plugin %1 returned</source>
        <translation>der vom Exec-Plugin %1 gelieferte Schlüssel</translation>
    </message>
    <message>
        <source>The exec credential plugin %1 returned neither a token nor a client certificate and key.</source>
        <translation>Das Exec-Anmelde-Plugin %1 hat weder ein Token noch ein Client-Zertifikat mit Schlüssel geliefert.</translation>
    </message>
</context>
<context>
    <name>Starforge::Kube::Informer</name>
    <message>
        <source>list %1</source>
        <translation>%1 auflisten</translation>
    </message>
    <message>
        <source>list %1 in namespace %2</source>
        <translation>%1 im Namespace %2 auflisten</translation>
    </message>
    <message>
        <source>watch %1</source>
        <translation>%1 beobachten</translation>
    </message>
    <message>
        <source>The API server ended the watch of %1 at once with nothing in it.</source>
        <translation>Der API-Server hat die Beobachtung von %1 sofort und ohne Inhalt beendet.</translation>
    </message>
    <message>
        <source>The watch of %1 broke: %2</source>
        <translation>Die Beobachtung von %1 ist abgebrochen: %2</translation>
    </message>
</context>
<context>
    <name>Starforge::Kube::LogStream</name>
    <message>
        <source>follow the log of pod %1</source>
        <translation>das Log von Pod %1 verfolgen</translation>
    </message>
    <message>
        <source>The log stream of pod %1 broke: %2</source>
        <translation>Der Log-Stream von Pod %1 ist abgebrochen: %2</translation>
    </message>
    <message>
        <source>read pod %1</source>
        <translation>Pod %1 lesen</translation>
    </message>
    <message>
        <source>The container of pod %1 is not running yet.</source>
        <translation>Der Container von Pod %1 läuft noch nicht.</translation>
    </message>
</context>
<context>
    <name>Starforge::Kube::OperatorProbe</name>
    <message>
        <source>The cluster's rayjobs.ray.io CustomResourceDefinition serves no ray.io/v1 version: its KubeRay is older than 1.0. Starforge needs KubeRay %1 or newer.</source>
        <translation>Die CustomResourceDefinition rayjobs.ray.io des Clusters bietet keine Version ray.io/v1: Sein KubeRay ist älter als 1.0. Starforge benötigt KubeRay %1 oder neuer.</translation>
    </message>
    <message>
        <source>KubeRay %1 or older: the RayJob CustomResourceDefinition has none of %2.</source>
        <translation>KubeRay %1 oder älter: Die RayJob-CustomResourceDefinition enthält keines von %2.</translation>
    </message>
    <message>
        <source>KubeRay %1: the RayJob CustomResourceDefinition has %2.</source>
        <translation>KubeRay %1: Die RayJob-CustomResourceDefinition enthält %2.</translation>
    </message>
    <message>
        <source>get the rayjobs.ray.io CustomResourceDefinition</source>
        <translation>die CustomResourceDefinition rayjobs.ray.io abrufen</translation>
    </message>
    <message>
        <source>it is not a CustomResourceDefinition</source>
        <translation>es ist keine CustomResourceDefinition</translation>
    </message>
    <message>
        <source>The KubeRay version could not be read: %1</source>
        <translation>Die KubeRay-Version konnte nicht gelesen werden: %1</translation>
    </message>
    <message>
        <source>KubeRay is not installed: the cluster has no rayjobs.ray.io CustomResourceDefinition, so it cannot run RayJobs. Ask the cluster's administrator to install the KubeRay operator (1.6 or newer).</source>
        <translation>KubeRay ist nicht installiert: Der Cluster hat keine CustomResourceDefinition rayjobs.ray.io und kann daher keine RayJobs ausführen. Bitten Sie den Administrator des Clusters, den KubeRay-Operator zu installieren (1.6 oder neuer).</translation>
    </message>
    <message>
        <source>The KubeRay version is unknown: the token may not read CustomResourceDefinitions (get customresourcedefinitions in apiextensions.k8s.io at the cluster scope). Starforge assumes KubeRay %1, without preRunningDeadlineSeconds, and enforces the pre-running deadline itself.</source>
        <translation>Die KubeRay-Version ist unbekannt: Das Token darf möglicherweise keine CustomResourceDefinitions lesen (get customresourcedefinitions in apiextensions.k8s.io clusterweit). Starforge geht von KubeRay %1 ohne preRunningDeadlineSeconds aus und setzt die Startfrist selbst durch.</translation>
    </message>
</context>
<context>
    <name>Starforge::Kube::PermissionCheck</name>
    <message>
        <source>%1 %2 at the cluster scope</source>
        <translation>%1 %2 clusterweit</translation>
    </message>
    <message>
        <source>%1 %2 in namespace %3</source>
        <translation>%1 %2 im Namespace %3</translation>
    </message>
    <message>
        <source>Submitting and tracking jobs</source>
        <translation>Jobs einreichen und verfolgen</translation>
    </message>
    <message>
        <source>Event timeline and diagnosis</source>
        <translation>Ereignis-Zeitleiste und Diagnose</translation>
    </message>
    <message>
        <source>Live logs</source>
        <translation>Live-Logs</translation>
    </message>
    <message>
        <source>Capacity heatmap and fit verdicts</source>
        <translation>Kapazitäts-Heatmap und Passungsprüfung</translation>
    </message>
    <message>
        <source>Playground chat</source>
        <translation>Playground-Chat</translation>
    </message>
    <message>
        <source>The token may use every feature in namespace %1.</source>
        <translation>Das Token darf jede Funktion im Namespace %1 nutzen.</translation>
    </message>
    <message>
        <source>%1 is unavailable: the token cannot %2.</source>
        <translation>%1 ist nicht verfügbar: Dem Token fehlt die Berechtigung für %2.</translation>
    </message>
    <message>
        <source>check whether the token may %1</source>
        <translation>prüfen, ob das Token berechtigt ist für %1</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::CapacityNodesModel</name>
    <message>
        <source>1 GPU</source>
        <translation>1 GPU</translation>
    </message>
    <message>
        <source>%1 GPUs</source>
        <translation>%1 GPUs</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>no series</source>
        <translation>keine Serie</translation>
    </message>
    <message>
        <source>No GPUs</source>
        <translation>Keine GPUs</translation>
    </message>
    <message>
        <source>%1 of %2 GPUs in use, %3 free</source>
        <translation>%1 von %2 GPUs belegt, %3 frei</translation>
    </message>
    <message>
        <source>Blocked: %1</source>
        <translation>Blockiert: %1</translation>
    </message>
    <message>
        <source>%1/%2: %3</source>
        <translation>%1/%2: %3</translation>
    </message>
    <message>
        <source>No pod uses its GPUs</source>
        <translation>Kein Pod nutzt seine GPUs</translation>
    </message>
    <message>
        <source>Pods using its GPUs:</source>
        <translation>Pods, die seine GPUs nutzen:</translation>
    </message>
    <message>
        <source>  and %1 more</source>
        <translation>  und %1 weitere</translation>
    </message>
    <message>
        <source>1 more pod without GPUs</source>
        <translation>1 weiterer Pod ohne GPUs</translation>
    </message>
    <message>
        <source>%1 more pods without GPUs</source>
        <translation>%1 weitere Pods ohne GPUs</translation>
    </message>
    <message>
        <source>schedulable</source>
        <translation>planbar</translation>
    </message>
    <message>
        <source>%1: %2 of %3 GPUs in use</source>
        <translation>%1: %2 von %3 GPUs belegt</translation>
    </message>
    <message>
        <source>%1: %2 of %3 GPUs in use, blocked: %4</source>
        <translation>%1: %2 von %3 GPUs belegt, blockiert: %4</translation>
    </message>
    <message>
        <source>%1/%2 (%3)</source>
        <translation>%1/%2 (%3)</translation>
    </message>
    <message>
        <source>Node</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <source>Series</source>
        <translation>Serie</translation>
    </message>
    <message>
        <source>GPUs used</source>
        <translation>Belegte GPUs</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPUs</translation>
    </message>
    <message>
        <source>Pods</source>
        <translation>Pods</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Status</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::CapacitySeriesModel</name>
    <message>
        <source>%1 (%2 blocked)</source>
        <translation>%1 (%2 blockiert)</translation>
    </message>
    <message>
        <source>%1 (1 pod)</source>
        <translation>%1 (1 Pod)</translation>
    </message>
    <message>
        <source>%1 (%2 pods)</source>
        <translation>%1 (%2 Pods)</translation>
    </message>
    <message>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
    <message>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <source>Nodes labelled %1; blocked: cordoned, not ready or tainted</source>
        <translation>Knoten mit dem Label %1; blockiert: abgesperrt, nicht bereit oder mit Taint</translation>
    </message>
    <message>
        <source>Allocatable GPUs of all its nodes</source>
        <translation>Zuweisbare GPUs aller zugehörigen Knoten</translation>
    </message>
    <message>
        <source>GPUs requested by the pods bound to its nodes</source>
        <translation>GPUs, die von den an seine Knoten gebundenen Pods angefordert werden</translation>
    </message>
    <message>
        <source>Unused GPUs on schedulable nodes</source>
        <translation>Ungenutzte GPUs auf planbaren Knoten</translation>
    </message>
    <message>
        <source>Unused GPUs on cordoned, not ready or tainted nodes</source>
        <translation>Ungenutzte GPUs auf abgesperrten, nicht bereiten oder mit Taint versehenen Knoten</translation>
    </message>
    <message>
        <source>The most free GPUs on one schedulable node</source>
        <translation>Die meisten freien GPUs auf einem einzelnen planbaren Knoten</translation>
    </message>
    <message>
        <source>GPUs asked by Pending pods that wait for %1 (not yet bound to a node)</source>
        <translation>GPUs, die von Pending-Pods angefordert werden, die auf %1 warten (noch an keinen Knoten gebunden)</translation>
    </message>
    <message>
        <source>The largest job that fits now: %1 × %2 GPUs (nodes × GPUs per node), %3 GPUs in all</source>
        <translation>Der größte Job, der jetzt passt: %1 × %2 GPUs (Knoten × GPUs pro Knoten), insgesamt %3 GPUs</translation>
    </message>
    <message>
        <source>No job fits now: no schedulable node has a free GPU</source>
        <translation>Derzeit passt kein Job: Kein planbarer Knoten hat eine freie GPU</translation>
    </message>
    <message>
        <source>Series</source>
        <translation>Serie</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPUs</translation>
    </message>
    <message>
        <source>Used</source>
        <translation>Belegt</translation>
    </message>
    <message>
        <source>Free</source>
        <translation>Frei</translation>
    </message>
    <message>
        <source>Blocked</source>
        <translation>Blockiert</translation>
    </message>
    <message>
        <source>Largest free</source>
        <translation>Max. frei</translation>
    </message>
    <message>
        <source>Pending</source>
        <translation>Pending</translation>
    </message>
    <message>
        <source>Fits now</source>
        <translation>Passt jetzt</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::CheckpointsModel</name>
    <message>
        <source>Ready to chat</source>
        <translation>Chatbereit</translation>
    </message>
    <message>
        <source>Convert first: %1</source>
        <translation>Zuerst konvertieren: %1</translation>
    </message>
    <message>
        <source>No Hugging Face weights</source>
        <translation>Keine Hugging-Face-Gewichte</translation>
    </message>
    <message>
        <source>Serve %1 with the tokenizer %2</source>
        <translation>%1 mit dem Tokenizer %2 bereitstellen</translation>
    </message>
    <message>
        <source>%1 wrote no consolidated model for step %2. %3</source>
        <translation>%1 hat für Schritt %2 kein konsolidiertes Modell geschrieben. %3</translation>
    </message>
    <message>
        <source>Step %1, %2, %3</source>
        <translation>Schritt %1, %2, %3</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <source>Chat</source>
        <translation>Chat</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>Backend</translation>
    </message>
    <message>
        <source>Path</source>
        <translation>Pfad</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::CodeTreeModel</name>
    <message>
        <source>1 byte</source>
        <translation>1 Byte</translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation>%1 Bytes</translation>
    </message>
    <message>
        <source>excluded: %1</source>
        <translation>ausgeschlossen: %1</translation>
    </message>
    <message>
        <source>%1 is not packed: excluded by %2</source>
        <translation>%1 wird nicht gepackt: ausgeschlossen durch %2</translation>
    </message>
    <message>
        <source>%1 is packed</source>
        <translation>%1 wird gepackt</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>Größe</translation>
    </message>
    <message>
        <source>Left out by</source>
        <translation>Ausgeschlossen durch</translation>
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
        <translation>&lt;b&gt;%1&lt;/b&gt; (Umgebungsvariable &lt;code&gt;%2&lt;/code&gt;)&lt;br&gt;%3</translation>
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
        <translation>Wartet: %1</translation>
    </message>
    <message>
        <source>%1: exit code %2</source>
        <translation>%1: Exit-Code %2</translation>
    </message>
    <message>
        <source>%1: %2, exit code %3</source>
        <translation>%1: %2, Exit-Code %3</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>not scheduled</source>
        <translation>nicht eingeplant</translation>
    </message>
    <message>
        <source>Pod</source>
        <translation>Pod</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>Rolle</translation>
    </message>
    <message>
        <source>Phase</source>
        <translation>Phase</translation>
    </message>
    <message>
        <source>Node</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <source>Restarts</source>
        <translation>Neustarts</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::JobsModel</name>
    <message>
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <translation>%1 min %2 s</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <translation>%1 h %2 min</translation>
    </message>
    <message>
        <source>just now</source>
        <translation>gerade eben</translation>
    </message>
    <message>
        <source>%1 min ago</source>
        <translation>vor %1 min</translation>
    </message>
    <message>
        <source>%1 h ago</source>
        <translation>vor %1 h</translation>
    </message>
    <message>
        <source>%1 d ago</source>
        <translation>vor %1 d</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>unbekannt</translation>
    </message>
    <message>
        <source>you</source>
        <translation>Sie</translation>
    </message>
    <message>
        <source>Job %1 (%2), RayJob %3</source>
        <translation>Job %1 (%2), RayJob %3</translation>
    </message>
    <message>
        <source>Reason: %1</source>
        <translation>Grund: %1</translation>
    </message>
    <message>
        <source>Cause: %1</source>
        <translation>Ursache: %1</translation>
    </message>
    <message>
        <source>Not archived: %1</source>
        <translation>Nicht archiviert: %1</translation>
    </message>
    <message>
        <source>Submitted %1</source>
        <translation>Eingereicht: %1</translation>
    </message>
    <message numerus="yes">
        <source>%1: %n GPU(s) in all (nodes × GPUs per node, series)</source>
        <translation>
            <numerusform>%1: insgesamt %n GPU (Knoten × GPUs pro Knoten, Serie)</numerusform>
            <numerusform>%1: insgesamt %n GPUs (Knoten × GPUs pro Knoten, Serie)</numerusform>
        </translation>
    </message>
    <message>
        <source>Ray started it %1</source>
        <translation>Von Ray gestartet: %1</translation>
    </message>
    <message>
        <source>It ended without running</source>
        <translation>Ohne Ausführung beendet</translation>
    </message>
    <message>
        <source>Not started yet</source>
        <translation>Noch nicht gestartet</translation>
    </message>
    <message>
        <source>Ended %1, %2 after Ray started it</source>
        <translation>Beendet: %1, %2 nach dem Start durch Ray</translation>
    </message>
    <message>
        <source>Ended %1 without running</source>
        <translation>Beendet: %1, ohne ausgeführt worden zu sein</translation>
    </message>
    <message>
        <source>The job records no owner: it was made before Starforge recorded owners, and nobody's app acts on it</source>
        <translation>Der Job hat keinen Besitzer: Er wurde erstellt, bevor Starforge Besitzer erfasste, und keine App bearbeitet ihn</translation>
    </message>
    <message>
        <source>Yours (%1)</source>
        <translation>Ihrer (%1)</translation>
    </message>
    <message>
        <source>%1's job: shown read-only, only its owner's app stops, archives or deletes it</source>
        <translation>Job von %1: schreibgeschützt angezeigt; nur die App des Besitzers stoppt, archiviert oder löscht ihn</translation>
    </message>
    <message>
        <source>Why it is pending — %1</source>
        <translation>Warum er wartet — %1</translation>
    </message>
    <message>
        <source>ID</source>
        <translation>ID</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Owner</source>
        <translation>Besitzer</translation>
    </message>
    <message>
        <source>State</source>
        <translation>Zustand</translation>
    </message>
    <message>
        <source>Pools</source>
        <translation>Pools</translation>
    </message>
    <message>
        <source>Submitted</source>
        <translation>Eingereicht</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>Dauer</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>Fortschritt</translation>
    </message>
    <message>
        <source>Ended</source>
        <translation>Beendet</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Meldung</translation>
    </message>
    <message>
        <source>The job id (starforge.dev/job-id)</source>
        <translation>Die Job-ID (starforge.dev/job-id)</translation>
    </message>
    <message>
        <source>The RayJob's name</source>
        <translation>Der Name des RayJobs</translation>
    </message>
    <message>
        <source>Whose job it is (starforge.dev/owner): you, or a colleague sharing the namespace</source>
        <translation>Wem der Job gehört (starforge.dev/owner): Ihnen oder einem Kollegen, der den Namespace mitnutzt</translation>
    </message>
    <message>
        <source>Submitting, Pending, Running, Succeeded, Failed or Stopped; Archived once its logs and events are in the bucket</source>
        <translation>Submitting, Pending, Running, Succeeded, Failed oder Stopped; Archived, sobald seine Logs und Ereignisse im Bucket liegen</translation>
    </message>
    <message>
        <source>What the job asked for: nodes × GPUs per node and the GPU series, per pool</source>
        <translation>Was der Job angefordert hat: Knoten × GPUs pro Knoten und die GPU-Serie, pro Pool</translation>
    </message>
    <message>
        <source>How long ago the job was submitted</source>
        <translation>Wie lange die Einreichung des Jobs zurückliegt</translation>
    </message>
    <message>
        <source>How long Ray has run the job, or ran it</source>
        <translation>Wie lange Ray den Job ausführt oder ausgeführt hat</translation>
    </message>
    <message>
        <source>How far training has come, from the driver's log (runner progress lines), followed while the job runs</source>
        <translation>Wie weit das Training fortgeschritten ist, aus dem Log des Treibers (Fortschrittszeilen des Runners), fortlaufend verfolgt, solange der Job läuft</translation>
    </message>
    <message>
        <source>When the job ended</source>
        <translation>Wann der Job beendet wurde</translation>
    </message>
    <message>
        <source>Why a Pending job waits (the diagnosis, with the numbers), else KubeRay's or Starforge's message about the job</source>
        <translation>Warum ein Pending-Job wartet (die Diagnose, mit Zahlen), sonst die Meldung von KubeRay oder Starforge zum Job</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::LogLinesModel</name>
    <message>
        <source>step %1/%2</source>
        <translation>Schritt %1/%2</translation>
    </message>
    <message>
        <source>epoch %1/%2</source>
        <translation>Epoche %1/%2</translation>
    </message>
    <message>
        <source>checkpoint at step %1</source>
        <translation>Checkpoint bei Schritt %1</translation>
    </message>
    <message>
        <source>exit code %1</source>
        <translation>Exit-Code %1</translation>
    </message>
    <message>
        <source>done: %1</source>
        <translation>fertig: %1</translation>
    </message>
    <message numerus="yes">
        <source>start: %n file(s) in the Capsule</source>
        <translation>
            <numerusform>Start: %n Datei in der Capsule</numerusform>
            <numerusform>Start: %n Dateien in der Capsule</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Starforge::Models::PlaygroundPodsModel</name>
    <message>
        <source>expired</source>
        <translation>abgelaufen</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
    <message>
        <source>%1 min</source>
        <translation>%1 min</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <translation>%1 h %2 min</translation>
    </message>
    <message>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
    <message>
        <source>The cluster ends the pod at %1 (activeDeadlineSeconds), whether or not the app runs.</source>
        <translation>Der Cluster beendet den Pod um %1 (activeDeadlineSeconds), unabhängig davon, ob die App läuft.</translation>
    </message>
    <message>
        <source>ready to chat</source>
        <translation>chatbereit</translation>
    </message>
    <message>
        <source>Pod</source>
        <translation>Pod</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPUs</translation>
    </message>
    <message>
        <source>State</source>
        <translation>Zustand</translation>
    </message>
    <message>
        <source>Time left</source>
        <translation>Restzeit</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::ProfileListModel</name>
    <message>
        <source>%1 (active)</source>
        <translation>%1 (aktiv)</translation>
    </message>
    <message>
        <source>%1: no API server set</source>
        <translation>%1: kein API-Server festgelegt</translation>
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
        <translation>Einstellung</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>Wert</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>Quelle</translation>
    </message>
    <message>
        <source>The environment variable %1 is set and overrides the profile while it is.</source>
        <translation>Die Umgebungsvariable %1 ist gesetzt und überschreibt das Profil, solange sie gesetzt ist.</translation>
    </message>
    <message>
        <source>(cleared on apply)</source>
        <translation>(wird beim Anwenden geleert)</translation>
    </message>
    <message>
        <source>•••••••• (saved to the keychain on apply)</source>
        <translation>•••••••• (wird beim Anwenden im Schlüsselbund gespeichert)</translation>
    </message>
    <message>
        <source>set in the environment</source>
        <translation>in der Umgebung gesetzt</translation>
    </message>
    <message>
        <source>(keychain unavailable)</source>
        <translation>(Schlüsselbund nicht verfügbar)</translation>
    </message>
    <message>
        <source>(checking keychain…)</source>
        <translation>(Schlüsselbund wird geprüft…)</translation>
    </message>
    <message>
        <source>set in the keychain</source>
        <translation>im Schlüsselbund gesetzt</translation>
    </message>
    <message>
        <source>not set</source>
        <translation>nicht gesetzt</translation>
    </message>
    <message>
        <source>(unset on apply)</source>
        <translation>(wird beim Anwenden entfernt)</translation>
    </message>
    <message>
        <source>%1 (default, on apply)</source>
        <translation>%1 (Standard, beim Anwenden)</translation>
    </message>
    <message>
        <source>(not set)</source>
        <translation>(nicht gesetzt)</translation>
    </message>
    <message>
        <source>edited</source>
        <translation>bearbeitet</translation>
    </message>
    <message>
        <source>environment (profile: %1)</source>
        <translation>Umgebung (Profil: %1)</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::RunComparisonModel</name>
    <message>
        <source>Run</source>
        <translation>Lauf</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <source>Wall time (s)</source>
        <translation>Echtzeit (s)</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::TimelineModel</name>
    <message>
        <source>%1 %2 on %3</source>
        <translation>%1 %2 auf %3</translation>
    </message>
    <message numerus="yes">
        <source>, seen %n times from %1 to %2</source>
        <translation>
            <numerusform>, %n Mal gesehen, von %1 bis %2</numerusform>
            <numerusform>, %n Mal gesehen, von %1 bis %2</numerusform>
        </translation>
    </message>
    <message>
        <source>, at %1</source>
        <translation>, um %1</translation>
    </message>
    <message>
        <source> (reported by %1)</source>
        <translation> (gemeldet von %1)</translation>
    </message>
    <message>
        <source>Last seen</source>
        <translation>Zuletzt gesehen</translation>
    </message>
    <message>
        <source>Object</source>
        <translation>Objekt</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>Typ</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Grund</translation>
    </message>
    <message>
        <source>Count</source>
        <translation>Anzahl</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Meldung</translation>
    </message>
</context>
<context>
    <name>Starforge::Models::TranscriptModel</name>
    <message>
        <source>first token after %1 ms</source>
        <translation>erstes Token nach %1 ms</translation>
    </message>
    <message>
        <source> · %1 tokens/s</source>
        <translation> · %1 Tokens/s</translation>
    </message>
    <message numerus="yes">
        <source> · %n token(s)</source>
        <translation>
            <numerusform> · %n Token</numerusform>
            <numerusform> · %n Tokens</numerusform>
        </translation>
    </message>
    <message>
        <source> · cut at max tokens</source>
        <translation> · bei max. Tokens abgeschnitten</translation>
    </message>
    <message>
        <source> · stopped</source>
        <translation> · gestoppt</translation>
    </message>
    <message>
        <source># Playground conversation

</source>
        <translation># Playground-Unterhaltung

</translation>
    </message>
    <message>
        <source>- Model: `%1` (pod `%2`)
</source>
        <translation>- Modell: `%1` (Pod `%2`)
</translation>
    </message>
    <message>
        <source>- Settings: temperature %1, top-p %2, max tokens %3
</source>
        <translation>- Einstellungen: Temperatur %1, Top-p %2, max. Tokens %3
</translation>
    </message>
    <message>
        <source>- System prompt: %1
</source>
        <translation>- Systemprompt: %1
</translation>
    </message>
    <message>
        <source>
## You

</source>
        <translation>
## Sie

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
        <translation>Sie: %1</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>Modell: %1</translation>
    </message>
    <message>
        <source> (still writing)</source>
        <translation> (schreibt noch)</translation>
    </message>
</context>
<context>
    <name>Starforge::Playground::ChatStream</name>
    <message>
        <source>chat with %1 in pod %2</source>
        <translation>Chat mit %1 in Pod %2</translation>
    </message>
    <message>
        <source>Cannot reach the pod %1 through the API server.</source>
        <translation>Der Pod %1 ist über den API-Server nicht erreichbar.</translation>
    </message>
    <message>
        <source>vLLM stopped the reply: %1</source>
        <translation>vLLM hat die Antwort abgebrochen: %1</translation>
    </message>
    <message>
        <source>The chat stream sent an event too large to read.</source>
        <translation>Der Chat-Stream hat ein Ereignis gesendet, das zu groß zum Lesen ist.</translation>
    </message>
    <message>
        <source>No answer from the pod: %1</source>
        <translation>Keine Antwort vom Pod: %1</translation>
    </message>
    <message>
        <source>The chat was refused (HTTP %1): %2</source>
        <translation>Der Chat wurde abgelehnt (HTTP %1): %2</translation>
    </message>
    <message>
        <source>The reply ended before vLLM finished it: the connection to the pod was cut.</source>
        <translation>Die Antwort endete, bevor vLLM sie abgeschlossen hat: Die Verbindung zum Pod wurde unterbrochen.</translation>
    </message>
</context>
<context>
    <name>Starforge::S3::MultipartUpload</name>
    <message>
        <source>The upload of %1 has not finished yet.</source>
        <translation>Der Upload von %1 ist noch nicht abgeschlossen.</translation>
    </message>
    <message>
        <source>The S3 client is gone.</source>
        <translation>Der S3-Client existiert nicht mehr.</translation>
    </message>
    <message>
        <source>Cannot upload %1: the file does not exist or cannot be read.</source>
        <translation>%1 kann nicht hochgeladen werden: Die Datei existiert nicht oder ist nicht lesbar.</translation>
    </message>
    <message>
        <source>The upload %1 of %2 to resume no longer exists on the server (completed, aborted or expired). Start the upload again.</source>
        <translation>Der fortzusetzende Upload %1 von %2 existiert auf dem Server nicht mehr (abgeschlossen, abgebrochen oder abgelaufen). Starten Sie den Upload erneut.</translation>
    </message>
    <message>
        <source>Cannot read %1: %2.</source>
        <translation>%1 kann nicht gelesen werden: %2.</translation>
    </message>
    <message>
        <source>Cannot read %1: the file became shorter during the upload. Upload it again once it no longer changes.</source>
        <translation>%1 kann nicht gelesen werden: Die Datei ist während des Uploads kürzer geworden. Laden Sie sie erneut hoch, sobald sie sich nicht mehr ändert.</translation>
    </message>
    <message>
        <source>Part %1 of %2: %3</source>
        <translation>Teil %1 von %2: %3</translation>
    </message>
    <message>
        <source>Part %1 of %2: the server's answer has no ETag. Check that the endpoint is an S3 API address.</source>
        <translation>Teil %1 von %2: Die Antwort des Servers enthält kein ETag. Prüfen Sie, ob der Endpunkt eine S3-API-Adresse ist.</translation>
    </message>
    <message>
        <source>The upload of %1 was cancelled.</source>
        <translation>Der Upload von %1 wurde abgebrochen.</translation>
    </message>
    <message>
        <source>The upload of %1 was paused; it can be resumed with upload id %2.</source>
        <translation>Der Upload von %1 wurde angehalten; er kann mit der Upload-ID %2 fortgesetzt werden.</translation>
    </message>
    <message>
        <source>The unfinished upload %1 could not be aborted (%2); its parts stay on the server until it is aborted or a lifecycle rule removes it.</source>
        <translation>Der unvollendete Upload %1 konnte nicht abgebrochen werden (%2); seine Teile bleiben auf dem Server, bis er abgebrochen wird oder eine Lifecycle-Regel ihn entfernt.</translation>
    </message>
</context>
<context>
    <name>Starforge::Secrets::KeychainSecretStore</name>
    <message>
        <source>No Secret Service answered while %1 (%2). Starforge keeps tokens and keys only in the OS keychain: install and start gnome-keyring (apt install gnome-keyring libsecret-1-0) or enable KeePassXC's Secret Service integration, then try again. On a machine without a desktop session, run Starforge under dbus-run-session with gnome-keyring-daemon --unlock.</source>
        <extracomment>%1: the operation ("reading FORGE_K8S_TOKEN of profile 'lab'"), %2: the Secret Service's error</extracomment>
        <translation>Kein Secret Service hat %1 geantwortet (%2). Starforge speichert Tokens und Schlüssel nur im Schlüsselbund des Betriebssystems: Installieren und starten Sie gnome-keyring (apt install gnome-keyring libsecret-1-0) oder aktivieren Sie die Secret-Service-Integration von KeePassXC und versuchen Sie es dann erneut. Auf einem Rechner ohne Desktop-Sitzung führen Sie Starforge unter dbus-run-session mit gnome-keyring-daemon --unlock aus.</translation>
    </message>
    <message>
        <source>The keychain is locked or has no default collection while %1 (%2). Unlock your login keyring (e.g. in Seahorse, "Passwords and Keys") and try again.</source>
        <extracomment>%1: the operation ("reading FORGE_K8S_TOKEN of profile 'lab'"), %2: the Secret Service's error</extracomment>
        <translation>Der Schlüsselbund war %1 gesperrt oder hatte keine Standardsammlung (%2). Entsperren Sie Ihren Anmelde-Schlüsselbund (z. B. in Seahorse, "Passwörter und Verschlüsselung") und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>Access to the keychain was denied while %1 (%2). Allow Starforge to use the keychain and try again.</source>
        <extracomment>%1: the operation ("reading FORGE_K8S_TOKEN of profile 'lab'"), %2: the Secret Service's error</extracomment>
        <translation>Der Zugriff auf den Schlüsselbund wurde %1 verweigert (%2). Erlauben Sie Starforge, den Schlüsselbund zu verwenden, und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>The keychain failed while %1: %2</source>
        <extracomment>%1: the operation ("reading FORGE_K8S_TOKEN of profile 'lab'"), %2: the Secret Service's error</extracomment>
        <translation>Fehler im Schlüsselbund %1: %2</translation>
    </message>
    <message>
        <source>reading %1 of profile '%2'</source>
        <extracomment>the operation a keychain message names after "while"; %1: the setting (FORGE_K8S_TOKEN), %2: the profile</extracomment>
        <translation>beim Lesen von %1 des Profils '%2'</translation>
    </message>
    <message>
        <source>saving %1 of profile '%2'</source>
        <extracomment>the operation a keychain message names after "while"; %1: the setting (FORGE_K8S_TOKEN), %2: the profile</extracomment>
        <translation>beim Speichern von %1 des Profils '%2'</translation>
    </message>
    <message>
        <source>removing %1 of profile '%2'</source>
        <extracomment>the operation a keychain message names after "while"; %1: the setting (FORGE_K8S_TOKEN), %2: the profile</extracomment>
        <translation>beim Entfernen von %1 des Profils '%2'</translation>
    </message>
</context>
<context>
    <name>Starforge::Session</name>
    <message>
        <source>Not connected</source>
        <translation>Nicht verbunden</translation>
    </message>
    <message>
        <source>Connecting (%1)…</source>
        <translation>Verbindung wird hergestellt (%1)…</translation>
    </message>
    <message>
        <source>Event journal on this machine</source>
        <translation>Ereignisjournal auf diesem Rechner</translation>
    </message>
    <message>
        <source>the session has no object storage yet</source>
        <translation>die Sitzung hat noch keinen Objektspeicher</translation>
    </message>
    <message>
        <source>Following %1 keeps failing (%2); retrying</source>
        <translation>Verfolgen von %1 schlägt wiederholt fehl (%2); neuer Versuch</translation>
    </message>
    <message>
        <source>reach the API server</source>
        <translation>den API-Server erreichen</translation>
    </message>
    <message>
        <source>the token cannot %1</source>
        <translation>dem Token fehlt die Berechtigung für %1</translation>
    </message>
    <message>
        <source>The cluster could not say who you are (%1), so your jobs are recorded as %2's. Set FORGE_OWNER in the profile to the same name on every workstation you use.</source>
        <translation>Der Cluster konnte nicht ermitteln, wer Sie sind (%1), daher werden Ihre Jobs als die von %2 erfasst. Setzen Sie FORGE_OWNER im Profil auf jeder Workstation, die Sie verwenden, auf denselben Namen.</translation>
    </message>
    <message>
        <source>KubeRay %1 (given)</source>
        <translation>KubeRay %1 (vorgegeben)</translation>
    </message>
    <message>
        <source>%1 Starforge enforces the pre-running deadline itself.</source>
        <translation>%1 Starforge setzt die Startfrist selbst durch.</translation>
    </message>
    <message>
        <source>job tracking and history need the profile's object storage: %1 Set FORGE_S3_ENDPOINT, FORGE_S3_BUCKET, FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY (the keys are kept in the keychain), or in the environment.</source>
        <translation>Job-Verfolgung und -Verlauf benötigen den Objektspeicher des Profils: %1 Setzen Sie FORGE_S3_ENDPOINT, FORGE_S3_BUCKET, FORGE_S3_ACCESS_KEY und FORGE_S3_SECRET_KEY (die Schlüssel werden im Schlüsselbund gespeichert) oder in der Umgebung.</translation>
    </message>
    <message>
        <source>Is FORGE_K8S_API_SERVER the cluster's API server?</source>
        <translation>Ist FORGE_K8S_API_SERVER der API-Server des Clusters?</translation>
    </message>
    <message>
        <source> (Kubernetes %1)</source>
        <translation> (Kubernetes %1)</translation>
    </message>
    <message>
        <source>Connected to %1%2, namespace %3</source>
        <translation>Verbunden mit %1%2, Namespace %3</translation>
    </message>
    <message>
        <source>%1 is unavailable: %2.</source>
        <translation>%1 ist nicht verfügbar: %2.</translation>
    </message>
    <message>
        <source>Not connected: %1</source>
        <translation>Nicht verbunden: %1</translation>
    </message>
    <message>
        <source>The cluster has not answered for %1 s.</source>
        <translation>Der Cluster antwortet seit %1 s nicht.</translation>
    </message>
    <message>
        <source>reach the cluster</source>
        <translation>den Cluster erreichen</translation>
    </message>
    <message>
        <source>The cluster answers again.</source>
        <translation>Der Cluster antwortet wieder.</translation>
    </message>
    <message>
        <source>Lost the cluster at %1: %2 Still trying.</source>
        <translation>Verbindung zum Cluster um %1 verloren: %2 Weitere Versuche laufen.</translation>
    </message>
    <message>
        <source>Reconnecting (%1)…</source>
        <translation>Verbindung wird wiederhergestellt (%1)…</translation>
    </message>
    <message>
        <source>Reconnecting: %1 Next try in %2 s.</source>
        <translation>Verbindung wird wiederhergestellt: %1 Nächster Versuch in %2 s.</translation>
    </message>
</context>
<context>
    <name>Starforge::StartupCleanup</name>
    <message>
        <source>Could not list the unfinished uploads under %1: %2</source>
        <translation>Die unvollendeten Uploads unter %1 konnten nicht aufgelistet werden: %2</translation>
    </message>
    <message>
        <source>Could not abort the unfinished upload of %1: %2</source>
        <translation>Der unvollendete Upload von %1 konnte nicht abgebrochen werden: %2</translation>
    </message>
</context>
<context>
    <name>StarforgeApp</name>
    <message>
        <source>Start a local sandbox cluster (starforge-sandbox) and connect to it.</source>
        <translation>Einen lokalen Sandbox-Cluster (starforge-sandbox) starten und sich damit verbinden.</translation>
    </message>
    <message>
        <source>Profiles file (default $STARFORGE_CONFIG_FILE, else ~/.config/starforge/profiles.ini).</source>
        <translation>Profildatei (Standard: $STARFORGE_CONFIG_FILE, sonst ~/.config/starforge/profiles.ini).</translation>
    </message>
    <message>
        <source>file</source>
        <translation>Datei</translation>
    </message>
    <message>
        <source>Open the connection profiles dialog at start.</source>
        <translation>Beim Start den Dialog für Verbindungsprofile öffnen.</translation>
    </message>
    <message>
        <source>Light or dark for this run: system (as the desktop says), light or dark. View › Appearance keeps a choice.</source>
        <translation>Hell oder dunkel für diesen Lauf: system (wie vom Desktop vorgegeben), light oder dark. Ansicht › Erscheinungsbild speichert eine Auswahl dauerhaft.</translation>
    </message>
    <message>
        <source>scheme</source>
        <translation>Schema</translation>
    </message>
    <message>
        <source>Run NeMo-RL training on Kubernetes + KubeRay from the desktop.</source>
        <translation>NeMo-RL-Trainings auf Kubernetes + KubeRay vom Desktop aus ausführen.</translation>
    </message>
    <message>
        <source>A JobSpec file or a code folder to open in the submission wizard.</source>
        <translation>Eine JobSpec-Datei oder ein Code-Ordner, der im Einreichungsassistenten geöffnet wird.</translation>
    </message>
    <message>
        <source>[JOBSPEC | FOLDER]</source>
        <translation>[JOBSPEC | ORDNER]</translation>
    </message>
    <message>
        <source>starforge: --color-scheme is system, light or dark, not %1</source>
        <translation>starforge: --color-scheme ist system, light oder dark, nicht %1</translation>
    </message>
    <message>
        <source>starforge: give one JobSpec or folder, not %1</source>
        <translation>starforge: geben Sie eine einzige JobSpec oder einen einzigen Ordner an, nicht %1</translation>
    </message>
    <message>
        <source>starforge: sandbox ready; kubectl: KUBECONFIG=%1</source>
        <translation>starforge: Sandbox bereit; kubectl: KUBECONFIG=%1</translation>
    </message>
</context>
<context>
    <name>SubmitCommand</name>
    <message>
        <source>building the Capsule...</source>
        <translation>Capsule wird gebaut...</translation>
    </message>
    <message>
        <source>checking the bucket...</source>
        <translation>Bucket wird geprüft...</translation>
    </message>
    <message>
        <source>uploading...</source>
        <translation>Upload läuft...</translation>
    </message>
    <message>
        <source>creating the RayJob...</source>
        <translation>RayJob wird erstellt...</translation>
    </message>
    <message numerus="yes">
        <source>%n day(s)</source>
        <translation><numerusform>%n Tag</numerusform><numerusform>%n Tage</numerusform></translation>
    </message>
</context>
<context>
    <name>Submitter</name>
    <message>
        <source>(none recorded)</source>
        <translation>(nicht erfasst)</translation>
    </message>
</context>
<context>
    <name>Timeline</name>
    <message>
        <source>other pods</source>
        <translation>weitere Pods</translation>
    </message>
</context>
<context>
    <name>Timelinetext</name>
    <message>
        <source>No events or state changes are known for this job.
</source>
        <translation>Für diesen Job sind keine Ereignisse oder Zustandsänderungen bekannt.
</translation>
    </message>
    <message>
        <source>%1 → %2 UTC, %3; one column ≈ %4
</source>
        <translation>%1 → %2 UTC, %3; eine Spalte ≈ %4
</translation>
    </message>
    <message>
        <source>
events, time since %1:
</source>
        <translation>
Ereignisse, Zeit seit %1:
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
        <translation>%1 ist %2 Zeichen lang; höchstens 63 sind erlaubt</translation>
    </message>
    <message>
        <source>%1 has uppercase letters; use lowercase (%2)</source>
        <translation>%1 enthält Großbuchstaben; verwenden Sie Kleinbuchstaben (%2)</translation>
    </message>
    <message>
        <source>%1 contains %2; only lowercase letters, digits and '-' are allowed</source>
        <translation>%1 enthält %2; nur Kleinbuchstaben, Ziffern und '-' sind erlaubt</translation>
    </message>
    <message>
        <source>%1 must start and end with a lowercase letter or digit</source>
        <translation>%1 muss mit einem Kleinbuchstaben oder einer Ziffer beginnen und enden</translation>
    </message>
    <message>
        <source>a URL is required, e.g. https://api.example.com:6443</source>
        <translation>eine URL ist erforderlich, z. B. https://api.example.com:6443</translation>
    </message>
    <message>
        <source>%1 is not a valid URL (%2)</source>
        <translation>%1 ist keine gültige URL (%2)</translation>
    </message>
    <message>
        <source>%1 has no scheme; write it as https://%1</source>
        <translation>%1 hat kein Schema; schreiben Sie https://%1</translation>
    </message>
    <message>
        <source>%1 uses the scheme '%2'; only https:// and http:// are supported</source>
        <translation>%1 verwendet das Schema '%2'; nur https:// und http:// werden unterstützt</translation>
    </message>
    <message>
        <source>%1 has no host name; write e.g. %2://api.example.com:6443</source>
        <translation>%1 hat keinen Hostnamen; schreiben Sie z. B. %2://api.example.com:6443</translation>
    </message>
    <message>
        <source>%1 carries user credentials; remove them from the URL and set the token or keys instead</source>
        <translation>%1 enthält Benutzeranmeldedaten; entfernen Sie sie aus der URL und legen Sie stattdessen das Token oder die Schlüssel fest</translation>
    </message>
    <message>
        <source>%1 has a query or fragment; remove the part after '?' or '#'</source>
        <translation>%1 enthält eine Query oder ein Fragment; entfernen Sie den Teil nach '?' oder '#'</translation>
    </message>
    <message>
        <source>write a number with an optional suffix, e.g. 64Gi, 512Mi or 1G (binary: Ki Mi Gi Ti Pi Ei; decimal: k M G T P E)</source>
        <translation>schreiben Sie eine Zahl mit optionalem Suffix, z. B. 64Gi, 512Mi oder 1G (binär: Ki Mi Gi Ti Pi Ei; dezimal: k M G T P E)</translation>
    </message>
    <message>
        <source>a quantity is required; %1</source>
        <extracomment>%1: how to write a quantity ("write a number with an optional suffix, ...")</extracomment>
        <translation>eine Mengenangabe ist erforderlich; %1</translation>
    </message>
    <message>
        <source>%1 is not a Kubernetes quantity; Kubernetes writes %2%3i (binary) or %2%3 (decimal)</source>
        <translation>%1 ist keine Kubernetes-Mengenangabe; Kubernetes schreibt %2%3i (binär) oder %2%3 (dezimal)</translation>
    </message>
    <message>
        <source>%1 is not a Kubernetes quantity; %2</source>
        <extracomment>%2: how to write a quantity ("write a number with an optional suffix, ...")</extracomment>
        <translation>%1 ist keine Kubernetes-Mengenangabe; %2</translation>
    </message>
    <message>
        <source>%1 is negative; a size must be positive</source>
        <translation>%1 ist negativ; eine Größe muss positiv sein</translation>
    </message>
    <message>
        <source>a name is required (lowercase letters, digits and '-')</source>
        <translation>ein Name ist erforderlich (Kleinbuchstaben, Ziffern und '-')</translation>
    </message>
    <message>
        <source>a name is required (lowercase letters, digits, '-' and '.')</source>
        <translation>ein Name ist erforderlich (Kleinbuchstaben, Ziffern, '-' und '.')</translation>
    </message>
    <message>
        <source>%1 is %2 characters long; at most 253 are allowed</source>
        <translation>%1 ist %2 Zeichen lang; höchstens 253 sind erlaubt</translation>
    </message>
    <message>
        <source>%1 has an empty part between dots</source>
        <translation>%1 hat einen leeren Teil zwischen zwei Punkten</translation>
    </message>
    <message>
        <source>%1 (in %2)</source>
        <extracomment>%1: what is wrong with one part of the name %2</extracomment>
        <translation>%1 (in %2)</translation>
    </message>
    <message>
        <source>a label key is required, e.g. starforge/gpu-series</source>
        <translation>ein Label-Schlüssel ist erforderlich, z. B. starforge/gpu-series</translation>
    </message>
    <message>
        <source>%1 has more than one '/'; a label key is prefix/name</source>
        <translation>%1 enthält mehr als ein '/'; ein Label-Schlüssel hat die Form Präfix/Name</translation>
    </message>
    <message>
        <source>the prefix of %1 is not a DNS subdomain: %2</source>
        <translation>das Präfix von %1 ist keine DNS-Subdomain: %2</translation>
    </message>
    <message>
        <source>the name part %1 of %2 must be 1 to 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit</source>
        <translation>der Namensteil %1 von %2 muss aus 1 bis 63 Buchstaben, Ziffern, '-', '_' oder '.' bestehen und mit einem Buchstaben oder einer Ziffer beginnen und enden</translation>
    </message>
    <message>
        <source>%1 is not a whole number; write digits only, e.g. %2</source>
        <translation>%1 ist keine ganze Zahl; schreiben Sie nur Ziffern, z. B. %2</translation>
    </message>
    <message>
        <source>%1 is out of range; use a number from %2 to %3</source>
        <translation>%1 liegt außerhalb des zulässigen Bereichs; verwenden Sie eine Zahl von %2 bis %3</translation>
    </message>
    <message>
        <source>%1 is not a yes/no value; write true or false (1/0, yes/no and on/off also work)</source>
        <translation>%1 ist kein Ja/Nein-Wert; schreiben Sie true oder false (1/0, yes/no und on/off funktionieren auch)</translation>
    </message>
    <message>
        <source>%1 is not an absolute path; start it with '/', e.g. /starforge</source>
        <translation>%1 ist kein absoluter Pfad; beginnen Sie ihn mit '/', z. B. /starforge</translation>
    </message>
    <message>
        <source>%1 contains '..'; write the path without it</source>
        <translation>%1 enthält '..'; schreiben Sie den Pfad ohne '..'</translation>
    </message>
    <message>
        <source>an image is required, e.g. nvcr.io/nvidia/nemo-rl:v0.7.0</source>
        <translation>ein Image ist erforderlich, z. B. nvcr.io/nvidia/nemo-rl:v0.7.0</translation>
    </message>
    <message>
        <source>%1 contains a space; an image reference has none</source>
        <translation>%1 enthält ein Leerzeichen; eine Image-Referenz enthält keine</translation>
    </message>
    <message>
        <source>%1 has a digest that is not sha256:&lt;64 hex digits&gt;</source>
        <translation>%1 hat einen Digest, der nicht die Form sha256:&lt;64 Hexadezimalziffern&gt; hat</translation>
    </message>
    <message>
        <source>%1 is not an image reference; write [registry/]repository[:tag], with a lowercase repository, e.g. nvcr.io/nvidia/nemo-rl:v0.7.0</source>
        <translation>%1 ist keine Image-Referenz; schreiben Sie [registry/]repository[:tag] mit einem Repository in Kleinbuchstaben, z. B. nvcr.io/nvidia/nemo-rl:v0.7.0</translation>
    </message>
    <message>
        <source>%1 is not an S3 bucket name; use 3 to 63 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit</source>
        <translation>%1 ist kein S3-Bucket-Name; verwenden Sie 3 bis 63 Kleinbuchstaben, Ziffern, '-' und '.', beginnend und endend mit einem Buchstaben oder einer Ziffer</translation>
    </message>
    <message>
        <source>%1 is not a version; write it as major.minor.patch, e.g. 2.55.1</source>
        <translation>%1 ist keine Version; schreiben Sie sie als major.minor.patch, z. B. 2.55.1</translation>
    </message>
    <message>
        <source>%1 is not an absolute path to a PEM file</source>
        <translation>%1 ist kein absoluter Pfad zu einer PEM-Datei</translation>
    </message>
    <message>
        <source>the CA file %1 does not exist</source>
        <translation>die CA-Datei %1 existiert nicht</translation>
    </message>
    <message>
        <source>the certificate file %1 does not exist</source>
        <translation>die Zertifikatsdatei %1 existiert nicht</translation>
    </message>
    <message>
        <source>the CA file %1 is not a readable file</source>
        <translation>die CA-Datei %1 ist keine lesbare Datei</translation>
    </message>
    <message>
        <source>the certificate file %1 is not a readable file</source>
        <translation>die Zertifikatsdatei %1 ist keine lesbare Datei</translation>
    </message>
    <message>
        <source>the CA file %1 holds no PEM certificate (-----BEGIN CERTIFICATE-----)</source>
        <translation>die CA-Datei %1 enthält kein PEM-Zertifikat (-----BEGIN CERTIFICATE-----)</translation>
    </message>
    <message>
        <source>the certificate file %1 holds no PEM certificate (-----BEGIN CERTIFICATE-----)</source>
        <translation>die Zertifikatsdatei %1 enthält kein PEM-Zertifikat (-----BEGIN CERTIFICATE-----)</translation>
    </message>
    <message>
        <source>the CA data is not base64; paste the %1 value of a kubeconfig</source>
        <translation>die CA-Daten sind kein Base64; fügen Sie den Wert %1 aus einer kubeconfig ein</translation>
    </message>
    <message>
        <source>the certificate data is not base64; paste the %1 value of a kubeconfig</source>
        <translation>die Zertifikatsdaten sind kein Base64; fügen Sie den Wert %1 aus einer kubeconfig ein</translation>
    </message>
    <message>
        <source>the CA data decodes to no PEM certificate (-----BEGIN CERTIFICATE-----)</source>
        <translation>die CA-Daten ergeben dekodiert kein PEM-Zertifikat (-----BEGIN CERTIFICATE-----)</translation>
    </message>
    <message>
        <source>the certificate data decodes to no PEM certificate (-----BEGIN CERTIFICATE-----)</source>
        <translation>die Zertifikatsdaten ergeben dekodiert kein PEM-Zertifikat (-----BEGIN CERTIFICATE-----)</translation>
    </message>
    <message>
        <source>%1 is not a proxy URL; write e.g. http://proxy.example.com:3128 or socks5://127.0.0.1:1080</source>
        <translation>%1 ist keine Proxy-URL; schreiben Sie z. B. http://proxy.example.com:3128 oder socks5://127.0.0.1:1080</translation>
    </message>
    <message>
        <source>%1 is a proxy reached over TLS (https://), which this app cannot speak to; give the proxy's plain http:// address (requests to https:// servers stay encrypted through it) or a socks5:// one</source>
        <translation>%1 ist ein über TLS (https://) erreichbarer Proxy, mit dem diese App nicht kommunizieren kann; geben Sie die einfache http://-Adresse des Proxys an (Anfragen an https://-Server bleiben dabei verschlüsselt) oder eine socks5://-Adresse</translation>
    </message>
    <message>
        <source>%1 uses the scheme '%2'; a proxy is http:// or socks5://</source>
        <translation>%1 verwendet das Schema '%2'; ein Proxy ist http:// oder socks5://</translation>
    </message>
    <message>
        <source>%1 has no host name</source>
        <translation>%1 hat keinen Hostnamen</translation>
    </message>
    <message>
        <source>a profile name is required</source>
        <translation>ein Profilname ist erforderlich</translation>
    </message>
    <message>
        <source>%1 is not a profile name; use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit</source>
        <translation>%1 ist kein Profilname; verwenden Sie 1 bis 63 Buchstaben, Ziffern, '.', '_' oder '-', beginnend mit einem Buchstaben oder einer Ziffer</translation>
    </message>
</context>
<context>
    <name>ZipWriter</name>
    <message>
        <source>zlib could not start a deflate stream.</source>
        <translation>zlib konnte keinen Deflate-Stream starten.</translation>
    </message>
    <message>
        <source>zlib failed while deflating %1.</source>
        <translation>zlib ist beim Komprimieren von %1 fehlgeschlagen.</translation>
    </message>
    <message>
        <source>%1 changed while the capsule was being built. Build it again.</source>
        <translation>%1 hat sich geändert, während die Capsule gebaut wurde. Bauen Sie sie erneut.</translation>
    </message>
    <message>
        <source>Cannot read %1: %2.</source>
        <translation>%1 kann nicht gelesen werden: %2.</translation>
    </message>
    <message>
        <source>Cannot write the capsule to %1: %2.</source>
        <translation>Die Capsule kann nicht in %1 geschrieben werden: %2.</translation>
    </message>
</context>
</TS>