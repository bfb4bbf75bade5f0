package dev.fencing.agent.instrumentation.quartz;

import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.returns;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.Set;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Every class implementing {@code org.quartz.Job} (the application's jobs, and bases such as Spring's
 * {@code QuartzJobBean} that declare {@code execute} for their subclasses): its {@code execute(JobExecutionContext)}.
 * Which jobs are declared is decided at run time, from the context's job key and class.
 */
final class JobInstrumentation implements TypeInstrumentation {
  static final String JOB = "org.quartz.Job";
  static final String CONTEXT = "org.quartz.JobExecutionContext";

  @Override
  public String classFileMarker() {
    // execute's descriptor names the context: every class that declares the method has it in its constant pool.
    return CONTEXT.replace('.', '/');
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return not(isInterface()).and(hasSuperType(named(JOB)));
  }

  @Override
  public Set<String> superTypeNames() {
    return Set.of(JOB);
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("execute").and(not(isAbstract())).and(takesArguments(1))
        .and(takesArgument(0, named(CONTEXT))).and(returns(void.class)), ExecuteAdvice.class);
  }

  @Override
  public String toString() {
    return "Quartz jobs (execute of every " + JOB + ")";
  }
}
