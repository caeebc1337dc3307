import { Link } from 'react-router';

export function NotFoundPage() {
  return (
    <section className="panel" aria-labelledby="nf-title">
      <p className="eyebrow">404</p>
      <h1 id="nf-title">There is no page here</h1>
      <p>
        <Link to="/">Back to the runs</Link>
      </p>
    </section>
  );
}
