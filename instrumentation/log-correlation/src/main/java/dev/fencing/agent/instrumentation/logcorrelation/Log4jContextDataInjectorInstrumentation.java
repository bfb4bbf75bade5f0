package dev.fencing.agent.instrumentation.logcorrelation;

import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.Set;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Log4j 2's ContextDataInjector implementations (the ThreadContext ones of log4j-core, and one an application
 * configures with log4j2.contextDataInjector): Log4j calls injectContextData once for each event it creates
 * (Log4jLogEvent, the reusable events of garbage-free logging, the async loggers' ring buffer events), on the logging
 * thread, and the event keeps what it returns.
 */
final class Log4jContextDataInjectorInstrumentation implements TypeInstrumentation {
  static final String INJECTOR = "org.apache.logging.log4j.core.ContextDataInjector";

  @Override
  public String classFileMarker() {
    return "injectContextData";
  }

  @Override
  public Set<String> superTypeNames() {
    return Set.of(INJECTOR);
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return not(isInterface()).and(hasSuperType(named(INJECTOR)));
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("injectContextData").and(takesArguments(2)).and(not(isAbstract())),
        InjectContextDataAdvice.class);
  }
}
