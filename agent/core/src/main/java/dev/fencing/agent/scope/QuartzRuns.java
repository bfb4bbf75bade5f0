package dev.fencing.agent.scope;

import dev.fencing.agent.bootstrap.QuartzJobNotFencedException;
import dev.fencing.agent.bootstrap.QuartzJobs;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.QuartzJobRules;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Quartz jobs declared in {@code fencing.quartz.jobs} as scopes of the agent's locks (docs/DESIGN.md section 4,
 * "Quartz"). When a declared job's {@code execute} starts on a node (its trigger fired there, or the node recovered
 * the job of a node the cluster took for dead), the agent campaigns for the job's lock, waits for it at most
 * {@code fencing.quartz.wait}, and runs the job in the lock's scope; when the job returns it gives the lock back. A job
 * the agent cannot take the lock for fails ({@link QuartzJobNotFencedException}) instead of running unfenced
 * ({@link CampaignRuns}).
 */
public final class QuartzRuns implements QuartzJobs.Hook {
  static final String LIBRARY = "quartz";
  /** Job key and class pairs remembered with their lock (or {@link #NOT_DECLARED}); a job's match is decided once. */
  private static final int MAX_REMEMBERED = 1024;
  private static final String NOT_DECLARED = "";

  private final QuartzJobRules rules;
  private final CampaignRuns runs;
  private final Map<String, String> lockByJob = new ConcurrentHashMap<>();

  /** {@code where}: the agent's coordinator, part of each lock's identity (see {@code CaptureHook}). */
  public QuartzRuns(AgentConfig config, CapturedLocks captured, String where, CampaignRuns.Campaign campaign) {
    this.rules = config.quartzJobs();
    this.runs = new CampaignRuns(captured, where, campaign, LIBRARY, config.quartzWait(), "fencing.quartz.wait",
        config.mode() == AgentConfig.Mode.OBSERVE, QuartzJobNotFencedException::new);
  }

  /** Jobs refused because the agent's lock was not taken in time. */
  public long refusedCount() {
    return runs.refusedCount();
  }

  @Override
  public Object enter(String jobKey, String jobClass) {
    String lock = lockOf(jobKey, jobClass);
    return lock == null ? null : runs.enter(lock, "Quartz job '" + jobKey + "'");
  }

  @Override
  public void exit(Object entered) {
    runs.exit(entered);
  }

  private String lockOf(String jobKey, String jobClass) {
    String id = jobKey + '\n' + jobClass;
    String known = lockByJob.get(id);
    if (known == null) {
      String lock = rules.lockFor(jobKey, jobClass);
      known = lock == null ? NOT_DECLARED : lock;
      if (lockByJob.size() < MAX_REMEMBERED) {
        lockByJob.put(id, known);
      }
    }
    return known == NOT_DECLARED ? null : known;
  }
}
