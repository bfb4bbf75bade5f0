package dev.fencing.fence.spring;

import dev.fencing.fence.http.FenceServletFilter;
import dev.fencing.fence.http.HttpFence;
import dev.fencing.fence.http.HttpFenceMeterBinder;
import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.FenceStore;
import dev.fencing.fence.store.JdbcFenceStore;
import dev.fencing.protocol.TokenSignature;
import io.micrometer.core.instrument.binder.MeterBinder;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import java.nio.file.Path;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * The HTTP fence in a servlet web application, when {@code fencing.fence.http.paths} names at least one path: an
 * {@link HttpFence} over the {@link FenceStore} bean, its {@link FenceServletFilter} registered early on
 * {@code fencing.fence.http.url-patterns} (requests outside the fenced paths and methods pass unchecked), and, with
 * Micrometer, its {@link HttpFenceMeterBinder} (Spring Boot binds every MeterBinder bean to its registries).
 */
@AutoConfiguration(after = FencingAutoConfiguration.class)
@ConditionalOnProperty(prefix = FencingProperties.PREFIX, name = "enabled", matchIfMissing = true)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({Filter.class, FenceServletFilter.class})
@Conditional(FencesConfigured.HttpPaths.class)
public class FencingHttpAutoConfiguration {

  private static final Log LOG = LogFactory.getLog(FencingHttpAutoConfiguration.class);

  @Bean
  @ConditionalOnMissingBean
  public HttpFence fencingHttpFence(FencingProperties properties, FenceStore store) {
    FencePolicy policy = policy(properties);
    if (store instanceof JdbcFenceStore) {
      String lock = policy.locks().iterator().next();
      try {
        store.state(lock);
      } catch (RuntimeException e) {
        // The database may only be down for now: serve, and let fenced requests get 503 until the store answers.
        LOG.warn("fencing: the HTTP fence's JDBC store cannot read its table yet; fenced requests get 503 until it "
            + "can (create fencing_fence with the SQL fence's `sql install`, or see the HTTP fence's README): "
            + e.getMessage());
      }
    }
    LOG.info("fencing: HTTP fence on for " + policy + " (" + store.getClass().getSimpleName() + ")");
    return new HttpFence(policy, store);
  }

  @Bean
  public FilterRegistrationBean<FenceServletFilter> fencingHttpFenceFilter(HttpFence fence,
      FencingProperties properties) {
    FilterRegistrationBean<FenceServletFilter> registration = new FilterRegistrationBean<>(
        new FenceServletFilter(fence));
    registration.setName("fencingHttpFence");
    registration.setUrlPatterns(properties.getHttp().getUrlPatterns());
    registration.setDispatcherTypes(DispatcherType.REQUEST);
    registration.setOrder(properties.getHttp().getOrder());
    return registration;
  }

  static FencePolicy policy(FencingProperties properties) {
    FencingProperties.Http http = properties.getHttp();
    List<String> locks = FencingProperties.locks(http.getLocks(), properties.getLocks(),
        FencingProperties.PREFIX + ".http.locks");
    try {
      FencePolicy.Builder b = FencePolicy.forLocks(locks.toArray(String[]::new))
          .paths(http.getPaths().toArray(String[]::new))
          .methods(http.getMethods().toArray(String[]::new))
          .strict(properties.isStrict())
          .permissive(properties.isPermissive())
          .drainTimeout(http.getDrainTimeout());
      String keyFile = properties.getSigningKeyFile();
      if (keyFile != null && !keyFile.isBlank()) {
        b.signingKey(TokenSignature.load(Path.of(keyFile.trim())));
      }
      return b.build();
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("fencing: invalid " + FencingProperties.PREFIX + ".* setting for the HTTP "
          + "fence: " + e.getMessage(), e);
    }
  }

  /** Only when the application has Micrometer: the binder's class needs it. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterBinder.class)
  static class Metrics {

    @Bean
    @ConditionalOnMissingBean
    HttpFenceMeterBinder fencingHttpFenceMeterBinder(HttpFence fence) {
      return new HttpFenceMeterBinder(fence);
    }
  }
}
