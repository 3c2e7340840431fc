import { Rng, SIGNAL_NAMES, SPAN_STRIDE, Signals } from '@rlvr/core';
import { oarG, grail, OarGConfigSchema, GrailConfigSchema, prepareEstimator } from '@rlvr/advantages';
const B=256,T=4096,N=B*T; const rng=new Rng(7);
const batch={numRollouts:B,groupIndex:Int32Array.from({length:B},(_,i)=>i>>3),promptTokens:new Int32Array(0),promptOffsets:new Int32Array(B+1),completionTokens:new Int32Array(N),completionOffsets:Int32Array.from({length:B+1},(_,i)=>i*T),rewards:Float32Array.from({length:B},()=>rng.float()<0.4?1:0),finish:new Uint8Array(B),spans:new Int32Array(B*6).fill(-1)};
for(let i=0;i<B;i++){const ce=T-1-rng.int(200);const cs=ce-1-(1+rng.int(8));batch.spans.set([cs-3,cs,cs,ce-1,ce-1,ce],i*6);}
const s=new Float32Array(N); for(let t=0;t<N;t++) s[t]=Math.exp(-3+2*rng.normal());
const sig=new Signals(N,{[SIGNAL_NAMES.gradXEmb]:s,[SIGNAL_NAMES.noisyKl]:s});
const seq=new Float64Array(B); const out=new Float32Array(N);
const time=(label,f)=>{for(let k=0;k<3;k++)f();const ts=[];for(let k=0;k<15;k++){const t0=performance.now();f();ts.push(performance.now()-t0);}ts.sort((a,b)=>a-b);console.log(label,'min',ts[0].toFixed(2),'med',ts[7].toFixed(2),'ms');};
const oc=OarGConfigSchema.parse({}), gc=GrailConfigSchema.parse({symmetry:'both'});
time('oar-g weights',()=>oarG.compute(batch,sig,seq,oc,out));
time('grail weights (both)',()=>grail.compute(batch,sig,seq,gc,out));
const eo=prepareEstimator('oar-g'), eg=prepareEstimator('grail');
time('oar-g est',()=>eo.estimate(batch,sig));
time('grail est',()=>eg.estimate(batch,sig));
